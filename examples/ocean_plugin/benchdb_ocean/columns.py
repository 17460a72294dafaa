"""Implicit vertical mixing of a tracer, column by column: a tridiagonal solve per water column.

Ocean models mix heat and salt vertically with a diffusivity that can be
large (convection, the surface mixed layer), so they step it implicitly, as
NEMO's ``trazdf_imp`` and ROMS do: for each water column the tridiagonal
system ``(I - dt D) T_new = T`` is built from the diffusivity at the
interfaces and the layer thicknesses, and solved with the Thomas algorithm.
The coefficients are computed in the sweep, every step, as those models do
(the diffusivity changes from step to step); benchdb's own ``tridiag``
kernel solves precomputed bands instead.  Before each solve a heat flux
enters the top layer, so repetitions feed each other; the solve conserves
the column's heat content ``sum(dz T)`` (no flux through the top and bottom
interfaces), so the total grows by exactly the flux.

Arrays are C-ordered ``(ncol, nz)`` (levels contiguous): the tracer, the
two Thomas sweeps' ``c'`` and ``d'``, and the diffusivity at the ``nz + 1``
interfaces of each column; the ``nz`` layer thicknesses are shared.

Counted per level (paper 003 Table I conventions, a divide is 5): the
coupling of the interface above, ``dt kappa / (0.5 (dz + dz_above))``, 8;
``1 / dz``, 5; the two off-diagonals and the diagonal, 4; the forward sweep
``m = b - a c'``, ``1 / m``, ``c' = c / m``, ``d' = (d - a d') / m``, 11; the
back substitution, 2: 30 flops.  Loads with reuse: the tracer, the
diffusivity and ``dz`` in the forward sweep, ``c'`` and ``d'`` in the back
sweep: 5; stores: ``c'``, ``d'`` and the tracer: 3.
"""

from __future__ import annotations

import numpy as np
from benchdb.kernels.plugin import Layout, PluginKernel
from numba import prange

DT = 3600.0  # s
FLUX = 1e-4  # tracer units x m / s into the top layer


def setup(shape: tuple[int, int], precision: str) -> tuple:
    """Layers thickening with depth, a mixed layer over a stratified interior."""
    ncol, nz = shape
    dz = (1.0 + 9.0 * np.linspace(0.0, 1.0, nz) ** 2).astype(precision)  # 1 m .. 10 m
    depth = np.cumsum(dz) - 0.5 * dz
    column = np.arange(ncol)[:, None]
    mixed = 20.0 + 30.0 * ((column * 37) % 11) / 10.0  # 20..50 m, varying between columns
    z_face = np.concatenate([[0.0], np.cumsum(dz)])[None, :]
    kappa = np.where(z_face < mixed, 1e-2, 1e-5).astype(precision)  # m2/s at the interfaces
    kappa[:, 0] = kappa[:, -1] = 0.0  # no diffusive flux through the surface or the bottom
    temp = (20.0 * np.exp(-depth / 200.0) + 2.0 + 0.01 * column).astype(precision)
    scratch = np.zeros_like(temp)
    return temp, kappa, dz, scratch, scratch.copy(), temp.dtype.type(DT), temp.dtype.type(FLUX)


def step(temp, kappa, dz, cp, dp, dt, flux, r):
    """Surface flux into the top layer, then one implicit mixing step per column."""
    ncol, nz = temp.shape
    for col in prange(ncol):
        temp[col, 0] += flux * dt / dz[0]
        upper = 0.0  # the coupling through the interface above level k
        for k in range(nz):
            lower = 0.0
            if k + 1 < nz:
                lower = dt * kappa[col, k + 1] / (0.5 * (dz[k] + dz[k + 1]))
            inv = 1.0 / dz[k]
            a, c = -upper * inv, -lower * inv
            b = 1.0 - a - c
            if k == 0:
                m = b
                dp[col, k] = temp[col, k] / m
            else:
                m = b - a * cp[col, k - 1]
                dp[col, k] = (temp[col, k] - a * dp[col, k - 1]) / m
            cp[col, k] = c / m
            upper = lower
        temp[col, nz - 1] = dp[col, nz - 1]
        for k in range(nz - 2, -1, -1):
            temp[col, k] = dp[col, k] - cp[col, k] * temp[col, k + 1]


def reference(state: tuple, r: int) -> None:
    """The same step: each column's system assembled as bands and solved by LAPACK."""
    from scipy.linalg import solve_banded

    temp, kappa, dz, _, _, dt, flux = state
    temp[:, 0] += flux * dt / dz[0]
    spacing = 0.5 * (dz[:-1] + dz[1:]).astype(np.float64)
    for col in range(temp.shape[0]):
        coupling = dt * kappa[col, 1:-1].astype(np.float64) / spacing  # interfaces 1..nz-1
        above = np.concatenate([[0.0], coupling]) / dz
        below = np.concatenate([coupling, [0.0]]) / dz
        bands = np.zeros((3, temp.shape[1]))
        bands[0, 1:] = -below[:-1]
        bands[1] = 1.0 + above + below
        bands[2, :-1] = -above[1:]
        temp[col] = solve_banded((1, 1), bands, temp[col].astype(np.float64))


COLUMNS = PluginKernel(
    name="columns",
    setup=setup,
    step=step,
    reference=reference,
    output=lambda state, done: state[0],
    flops=30,
    loads=5,
    stores=3,
    layout=Layout(
        extents=("ncol", "nz"),
        bytes="(4 * ncol * nz + ncol + nz) * itemsize",
        contiguous="nz",
        min_extent=2,
    ),
    description="implicit vertical mixing: a tridiagonal system per water column (Thomas)",
    family="ocean",
)
