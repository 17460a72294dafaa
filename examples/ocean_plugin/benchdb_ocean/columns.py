"""Implicit vertical mixing of a tracer: a tridiagonal solve in every water column.

Ocean models step vertical diffusion implicitly, because the diffusivity in
the surface mixed layer and under convection is so large that an explicit
step would need a time step of seconds (NEMO ``trazdf_imp``, ROMS
``step3d_t``, MOM's vertical diffusion).  For each water column they build
the tridiagonal system of backward-Euler diffusion from the diffusivity at
the layer interfaces and the layer thicknesses, in thickness-weighted form as
NEMO writes it,

    e3t_k T'_k - w_k (T'_{k-1} - T'_k) + w_{k+1} (T'_k - T'_{k+1}) = e3t_k T_k,
    w_k = dt kappa_k / e3w_k,

and solve it with the Thomas algorithm.  The matrix is symmetric and its
columns add up to ``e3t``, so the solve conserves the column's heat content
``sum_k e3t_k T_k``: no diffusive flux passes the surface or the sea floor,
and the only change is the surface heat flux, which enters the top row's
right-hand side (``+ dt Q``) every repetition -- so each repetition changes
the state and feeds the next.

How this differs from benchdb's own ``tridiag`` kernel (precomputed bands,
one column at a time along contiguous memory): the arrays are stored as the
Fortran models store theirs, ``T(i, j, k)``, i.e. C-ordered ``(nz, ny, nx)``
with ``nx`` contiguous, and the coefficients are assembled in the sweep from
a horizontally varying diffusivity, every step (the diffusivity changes each
step in a model).  The recurrence runs over the levels, outermost, and the
innermost loop runs over the independent columns along ``i``, which
vectorizes; rows ``j`` of columns are independent (``prange``).  ``c'`` of
the forward sweep is a scratch array, ``d'`` overwrites the tracer.

Counted per level of a column (paper 003 Table I: add, subtract, multiply 1,
a divide 5; the sign of ``-dt`` folds into the constant): the couplings
through the interfaces above and below, ``a = -dt kappa_k / e3w_k`` and
``c = -dt kappa_{k+1} / e3w_{k+1}``, 6 each (NEMO also computes both in
every level); the pivot ``m = e3t - a - c - a c'_{k-1}``, 4; ``1 / m``, 5;
``c' = c / m`` as ``c * (1/m)``, 1; ``d' = (e3t T - a d'_{k-1}) / m``, 4;
the back substitution ``T -= c' T_{k+1}``, 2: **28 flops**.  Loads with
reuse along ``i`` (``e3t`` and ``e3w`` are constants of a level): forward,
``kappa`` at the two interfaces, ``T_k``, ``d'_{k-1}`` and ``c'_{k-1}``
(5 streams); backward, ``c'_k``, ``T_k`` and ``T_{k+1}`` (3): **8 loads**;
``c'_k`` and ``d'_k`` forward and ``T_k`` backward: **3 stores**.
"""

from __future__ import annotations

import numpy as np
from benchdb.kernels.plugin import Layout, PluginKernel
from numba import prange

DT = 3600.0  # s: one hour, as ocean models step the tracers
HEAT_FLUX = 100.0 / (1025.0 * 3990.0)  # 100 W/m2 as K m/s (density x heat capacity of seawater)
KAPPA_MIXED, KAPPA_BACKGROUND = 5e-2, 1e-5  # m2/s: in the mixed layer, below it
TOP_LAYER, BOTTOM_LAYER = 1.0, 200.0  # m: layers thicken with depth, as in global models


def grid(nz: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(e3t, e3w, depth of the interfaces): nz layer thicknesses growing quadratically from
    1 m to 200 m, and the nz + 1 distances between layer centres across each interface
    (half a layer at the surface and at the sea floor)."""
    s = np.arange(nz) / max(nz - 1, 1)
    e3t = TOP_LAYER + (BOTTOM_LAYER - TOP_LAYER) * s**2
    z_w = np.concatenate([[0.0], np.cumsum(e3t)])
    z_t = z_w[:-1] + 0.5 * e3t
    e3w = np.diff(np.concatenate([[0.0], z_t, [z_w[-1]]]))
    return e3t, e3w, z_w


def setup(shape: tuple[int, int, int], precision: str) -> tuple:
    """Stratified water under a mixed layer whose depth varies from column to column.

    Returns ``(temp, kappa, e3t, e3w, cp, dt, flux)``: the temperature
    ``(nz, ny, nx)``, the diffusivity at the ``nz + 1`` interfaces (zero at
    the surface and the sea floor), the vertical grid, the scratch ``c'``
    and the scalars.
    """
    nz, ny, nx = shape
    e3t, e3w, z_w = grid(nz)
    y = np.arange(ny)[:, None] / ny
    x = np.arange(nx)[None, :] / nx
    mixed_depth = 30.0 + 40.0 * (0.5 + 0.5 * np.sin(2 * np.pi * x) * np.cos(2 * np.pi * y))  # m
    z = z_w[:, None, None]
    kappa = KAPPA_BACKGROUND + (KAPPA_MIXED - KAPPA_BACKGROUND) * 0.5 * (
        1.0 - np.tanh((z - mixed_depth) / 10.0)
    )
    kappa[0] = kappa[-1] = 0.0  # no diffusive flux through the surface or the sea floor
    z_t = (z_w[:-1] + 0.5 * e3t)[:, None, None]
    temp = 2.0 + 18.0 * np.exp(-z_t / 300.0) + 0.5 * np.cos(2 * np.pi * (x + y)) * (z_t < 100.0)
    real = np.dtype(precision).type
    return (
        temp.astype(precision),
        kappa.astype(precision),
        e3t.astype(precision),
        e3w.astype(precision),
        np.zeros((nz, ny, nx), dtype=precision),
        real(DT),
        real(HEAT_FLUX),
    )


def step(temp, kappa, e3t, e3w, cp, dt, flux, r):
    """The surface heat flux and one implicit mixing step, in every column (Thomas)."""
    nz, ny, nx = temp.shape
    one = temp.dtype.type(1.0)  # a float64 literal would promote float32 arithmetic
    for j in prange(ny):
        for i in range(nx):  # the top level: no coupling above, the flux on the right
            c = -dt * kappa[1, j, i] / e3w[1]
            inv = one / (e3t[0] - c)
            cp[0, j, i] = c * inv
            temp[0, j, i] = (e3t[0] * temp[0, j, i] + dt * flux) * inv
        for k in range(1, nz):
            for i in range(nx):
                a = -dt * kappa[k, j, i] / e3w[k]
                c = -dt * kappa[k + 1, j, i] / e3w[k + 1]
                inv = one / (e3t[k] - a - c - a * cp[k - 1, j, i])
                cp[k, j, i] = c * inv
                temp[k, j, i] = (e3t[k] * temp[k, j, i] - a * temp[k - 1, j, i]) * inv
        for k in range(nz - 2, -1, -1):
            for i in range(nx):
                temp[k, j, i] -= cp[k, j, i] * temp[k + 1, j, i]


def reference(state: tuple, r: int) -> None:
    """The same step by numpy: every column's full matrix assembled at once and solved with
    LU and pivoting (``np.linalg.solve``), in float64."""
    temp, kappa, e3t, e3w, _, dt, flux = state
    nz, ny, nx = temp.shape
    w = float(dt) * kappa.astype(np.float64) / e3w.astype(np.float64)[:, None, None]
    w = np.moveaxis(w, 0, -1).reshape(ny * nx, nz + 1)  # one row of couplings per column
    w[:, 0] = 0.0  # the surface: its flux is the boundary condition, added below
    thickness = e3t.astype(np.float64)
    matrix = np.zeros((ny * nx, nz, nz))
    level = np.arange(nz)
    matrix[:, level, level] = thickness + w[:, :-1] + w[:, 1:]
    matrix[:, level[1:], level[:-1]] = -w[:, 1:-1]
    matrix[:, level[:-1], level[1:]] = -w[:, 1:-1]
    rhs = thickness * np.moveaxis(temp, 0, -1).reshape(ny * nx, nz).astype(np.float64)
    rhs[:, 0] += float(dt) * float(flux)
    solution = np.linalg.solve(matrix, rhs[:, :, None])[:, :, 0]
    temp[...] = np.moveaxis(solution.reshape(ny, nx, nz), -1, 0)


def temperature(state: tuple, repetitions_done: int) -> np.ndarray:
    """The tracer, updated in place by every repetition."""
    return state[0]


COLUMNS = PluginKernel(
    name="columns",
    setup=setup,
    step=step,
    reference=reference,
    output=temperature,
    flops=28,
    loads=8,
    stores=3,
    layout=Layout(
        extents=("nz", "ny", "nx"),
        # temp and c' (nz levels), kappa (nz + 1 interfaces), e3t and e3w
        bytes="((3 * nz + 1) * ny * nx + 2 * nz + 1) * itemsize",
        updates="inner",  # nz * ny * nx: every level of every column
        contiguous="nx",
        min_extent=2,
    ),
    description=(
        "implicit vertical mixing: per water column, the tridiagonal system of a diffusivity "
        "profile assembled and solved (Thomas), columns vectorized along x"
    ),
)
