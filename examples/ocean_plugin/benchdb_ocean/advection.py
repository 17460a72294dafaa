"""Upwind (donor-cell) advection of a tracer by a divergence-free flow on a C grid.

The first-order upwind scheme in flux form (Courant, Isaacson and Rees 1952;
the donor-cell pass that MPDATA, Smolarkiewicz 1983, starts from; the
low-order flux of NEMO's flux-corrected tracer advection, MITgcm's tracer
advection scheme 1): each cell face carries the velocity times the tracer of
the cell the flow comes from, and the tracer changes by the divergence of
those fluxes.  Ocean and atmosphere models use it where positivity and
monotonicity matter more than accuracy.  Why these properties hold here: the
velocities are a uniform current plus the differences of a streamfunction,
so the discrete divergence of every cell vanishes, and the Courant numbers
keep every cell's outflow below its content; the scheme is then monotone (no
new extrema) and, on the periodic domain, conserves the total tracer up to
round-off.

Arrays are C-ordered ``(ny + 2, nx + 2)`` (``nx`` contiguous) with one halo
row and column on every side; the cells are ``1..ny, 1..nx``.  ``u[j, i]``
(m/s) is the flow through the east face of cell ``(j, i)`` (``u[j, 0]`` the
west face of the first cell), ``v[j, i]`` through its north face.  One
repetition is one forward step

    q_new = q - dt/dx (F_e - F_w) - dt/dy (G_n - G_s)

from the source tracer array into the other: the two alternate, so each
repetition feeds the next.  The step first copies the periodic halo of its
source (``2 (nx + ny) + 8`` copies a step, like the shallow model's boundary
loop not counted per point).

Counted per updated point (paper 003 Table I: add, subtract and multiply 1,
a divide 5; the upwind choice is a comparison and a select, not counted):
the four face fluxes, 4 multiplies; the two flux differences, 2; their
scaling by ``dt/dx`` and ``dt/dy``, 2; the two subtractions from ``q``, 2:
**10 flops**.  Loads with reuse along the contiguous ``i``: the tracer rows
``j - 1``, ``j`` and ``j + 1`` (3 streams; ``q[j, i - 1]`` and
``q[j, i + 1]`` ride on row ``j``), ``u`` row ``j`` (1; ``u[j, i - 1]`` is
the previous point's east face), ``v`` rows ``j`` and ``j - 1`` (2):
**6 loads**; the new tracer: **1 store**.
"""

from __future__ import annotations

import numpy as np
from benchdb.kernels.plugin import Layout, PluginKernel
from numba import prange

DX, DY = 10e3, 8e3  # m: unequal, so a kernel that swaps dt/dx and dt/dy is caught
DT = 1200.0  # s
DRIFT_U, DRIFT_V = 0.3, -0.2  # m/s, a uniform current
EDDY = 0.5  # m/s, the eddy's largest speed: larger than the drift, so both signs occur
# Largest outflow of a cell in one step: 2 (dt/dx (|U| + W) + dt/dy (|V| + W)) = 0.40 < 1.


def setup(shape: tuple[int, int], precision: str) -> tuple:
    """A Gaussian blob and a front, in a uniform current plus one periodic eddy.

    The eddy's velocities are the differences of a streamfunction given at the
    cell corners, ``u = -d(psi)/dy``, ``v = d(psi)/dx``, so every cell's discrete
    divergence is zero; the eddy's amplitude is scaled to the shorter side of
    the domain so that no speed exceeds ``EDDY`` on any shape.
    """
    ny, nx = shape
    real = np.dtype(precision).type
    jc = np.arange(ny + 1)[:, None]  # corners: psi[jc, ic] is at the north-east corner of (jc, ic)
    ic = np.arange(nx + 1)[None, :]
    amplitude = EDDY * min(nx * DX, ny * DY) / (2 * np.pi)
    psi = amplitude * np.sin(2 * np.pi * ic / nx) * np.sin(2 * np.pi * jc / ny)
    u = np.zeros((ny + 2, nx + 2), dtype=precision)
    v = np.zeros((ny + 2, nx + 2), dtype=precision)
    u[1 : ny + 1, 0 : nx + 1] = DRIFT_U - (psi[1:, :] - psi[:-1, :]) / DY
    v[0 : ny + 1, 1 : nx + 1] = DRIFT_V + (psi[:, 1:] - psi[:, :-1]) / DX
    u[:, 0] = u[:, nx]  # the same face seen from both sides of the periodic seam, bit for bit
    v[0, :] = v[ny, :]
    x = (np.arange(nx + 2)[None, :] - 0.5) / nx  # cell centres in [0, 1)
    y = (np.arange(ny + 2)[:, None] - 0.5) / ny
    q = 1.0 + 2.0 * np.exp(-((x - 0.3) ** 2 + (y - 0.6) ** 2) / 0.02) + 1.0 * (x > 0.6) * (y < 0.4)
    q = q.astype(precision)
    return q, q.copy(), u, v, real(DT / DX), real(DT / DY)


def step(q, qnew, u, v, cx, cy, r):
    """One forward step: periodic halo of the source, then the donor-cell update."""
    src, dst = (q, qnew) if r % 2 == 0 else (qnew, q)
    ny = src.shape[0] - 2
    nx = src.shape[1] - 2
    for i in range(nx + 2):
        src[0, i] = src[ny, i]
        src[ny + 1, i] = src[1, i]
    for j in range(ny + 2):
        src[j, 0] = src[j, nx]
        src[j, nx + 1] = src[j, 1]
    for j in prange(1, ny + 1):
        for i in range(1, nx + 1):
            ue = u[j, i]
            uw = u[j, i - 1]
            vn = v[j, i]
            vs = v[j - 1, i]
            fe = ue * (src[j, i] if ue > 0 else src[j, i + 1])
            fw = uw * (src[j, i - 1] if uw > 0 else src[j, i])
            gn = vn * (src[j, i] if vn > 0 else src[j + 1, i])
            gs = vs * (src[j - 1, i] if vs > 0 else src[j, i])
            dst[j, i] = src[j, i] - cx * (fe - fw) - cy * (gn - gs)


def reference(state: tuple, r: int) -> None:
    """The same step with whole-array numpy operations (the halo by ``np.pad``)."""
    q, qnew, u, v, cx, cy = state
    src, dst = (q, qnew) if r % 2 == 0 else (qnew, q)
    src[...] = np.pad(src[1:-1, 1:-1], 1, mode="wrap")
    ue, uw = u[1:-1, 1:-1], u[1:-1, :-2]
    vn, vs = v[1:-1, 1:-1], v[:-2, 1:-1]
    west, here, east = src[1:-1, :-2], src[1:-1, 1:-1], src[1:-1, 2:]
    south, north = src[:-2, 1:-1], src[2:, 1:-1]
    flux_x = np.where(ue > 0, ue * here, ue * east) - np.where(uw > 0, uw * west, uw * here)
    flux_y = np.where(vn > 0, vn * here, vn * north) - np.where(vs > 0, vs * south, vs * here)
    dst[1:-1, 1:-1] = here - cx * flux_x - cy * flux_y


def latest(state: tuple, repetitions_done: int) -> np.ndarray:
    """The cells (halo left out) of the tracer written last: repetition 0 writes ``qnew``."""
    q = state[1] if repetitions_done % 2 else state[0]
    return q[1:-1, 1:-1]


UPWIND = PluginKernel(
    name="upwind",
    setup=setup,
    step=step,
    reference=reference,
    output=latest,
    flops=10,
    loads=6,
    stores=1,
    layout=Layout(
        extents=("ny", "nx"),
        arrays=4,  # q, qnew, u, v
        halo=(2, 2),  # one halo row and column on each side
        updates="inner",  # ny * nx cells
        contiguous="nx",
        min_extent=2,
    ),
    description=(
        "first-order upwind (donor-cell) flux-form tracer advection, one forward step on a "
        "periodic C grid"
    ),
)
