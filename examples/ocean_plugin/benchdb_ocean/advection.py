"""Upwind (donor-cell) advection of a tracer by a divergence-free flow on a C grid.

The first-order upwind, flux-form scheme that ocean and atmosphere models use
for tracers where positivity matters more than accuracy (Smolarkiewicz 1983;
the donor-cell option of MITgcm's and NEMO's tracer advection): each cell
face carries the velocity times the tracer of the cell the flow comes from,
and the tracer changes by the divergence of those fluxes.  With velocities
given as Courant numbers (u dt / dx) whose outflows from any cell add up to
at most 1, the scheme is monotone, and on a periodic domain it conserves the
total tracer exactly up to round-off.

Arrays are C-ordered ``(ny + 2, nx + 2)`` with one halo row and column on
every side: cells ``1..ny, 1..nx``; ``u[j, i]`` is the flow through the east
face of cell ``(j, i)`` (``i = 0`` is the west face of the first cell),
``v[j, i]`` through its north face.  A repetition fills the source's halo
periodically, then updates every inner cell into the other tracer array
(the two alternate, so repetitions feed each other).

Counted per updated point (paper 003 Table I conventions, comparisons not
counted): four fluxes (4 multiplies), two flux differences and two
subtractions from the tracer: 8 flops.  Loads with reuse along ``i``: the
tracer rows ``j - 1``, ``j`` and ``j + 1`` (3 streams), ``u`` (1, its
``i - 1`` reused), ``v`` rows ``j - 1`` and ``j`` (2): 6; one store.
"""

from __future__ import annotations

import numpy as np
from benchdb.kernels.plugin import Layout, PluginKernel
from numba import prange

U0, V0, SWIRL = 0.1, 0.05, 0.05  # Courant numbers: a uniform drift plus an eddy


def setup(shape: tuple[int, int], precision: str) -> tuple[np.ndarray, ...]:
    """A blob and a front in a drifting eddy; the flow comes from a periodic streamfunction."""
    ny, nx = shape
    j = np.arange(ny + 1)[:, None]  # corners (j, i) of the cells, 0..n
    i = np.arange(nx + 1)[None, :]
    psi = SWIRL * np.sin(2 * np.pi * i / nx) * np.sin(2 * np.pi * j / ny)
    u = np.zeros((ny + 2, nx + 2), dtype=precision)
    v = np.zeros((ny + 2, nx + 2), dtype=precision)
    u[1 : ny + 1, 0 : nx + 1] = U0 + psi[1:, :] - psi[:-1, :]
    v[0 : ny + 1, 1 : nx + 1] = V0 - (psi[:, 1:] - psi[:, :-1])
    y = (np.arange(ny + 2)[:, None] - 0.5) / ny
    x = (np.arange(nx + 2)[None, :] - 0.5) / nx
    q = 1.0 + np.exp(-((x - 0.3) ** 2 + (y - 0.4) ** 2) / 0.01) + (x > 0.6) * (y < 0.5)
    q = q.astype(precision)
    return q, q.copy(), u, v


def step(q, qnew, u, v, r):
    """One forward step: periodic halo of the source, then the donor-cell update."""
    src, dst = (q, qnew) if r % 2 == 0 else (qnew, q)
    ny, nx = src.shape[0] - 2, src.shape[1] - 2
    for i in range(nx + 2):
        src[0, i] = src[ny, i]
        src[ny + 1, i] = src[1, i]
    for j in range(ny + 2):
        src[j, 0] = src[j, nx]
        src[j, nx + 1] = src[j, 1]
    for j in prange(1, ny + 1):
        for i in range(1, nx + 1):
            ue, uw, vn, vs = u[j, i], u[j, i - 1], v[j, i], v[j - 1, i]
            fe = ue * (src[j, i] if ue > 0 else src[j, i + 1])
            fw = uw * (src[j, i - 1] if uw > 0 else src[j, i])
            gn = vn * (src[j, i] if vn > 0 else src[j + 1, i])
            gs = vs * (src[j - 1, i] if vs > 0 else src[j, i])
            dst[j, i] = src[j, i] - (fe - fw) - (gn - gs)


def reference(state: tuple[np.ndarray, ...], r: int) -> None:
    """The same step with whole-array numpy operations."""
    q, qnew, u, v = state
    src, dst = (q, qnew) if r % 2 == 0 else (qnew, q)
    src[0, :], src[-1, :] = src[-2, :], src[1, :]
    src[:, 0], src[:, -1] = src[:, -2], src[:, 1]
    inner = src[1:-1, 1:-1]
    east = u[1:-1, 1:-1] * np.where(u[1:-1, 1:-1] > 0, inner, src[1:-1, 2:])
    west = u[1:-1, :-2] * np.where(u[1:-1, :-2] > 0, src[1:-1, :-2], inner)
    north = v[1:-1, 1:-1] * np.where(v[1:-1, 1:-1] > 0, inner, src[2:, 1:-1])
    south = v[:-2, 1:-1] * np.where(v[:-2, 1:-1] > 0, src[:-2, 1:-1], inner)
    dst[1:-1, 1:-1] = inner - (east - west) - (north - south)


def latest(state: tuple[np.ndarray, ...], done: int) -> np.ndarray:
    """The tracer written last: repetition 0 writes ``qnew``."""
    return state[1] if done % 2 else state[0]


UPWIND = PluginKernel(
    name="upwind",
    setup=setup,
    step=step,
    reference=reference,
    output=latest,
    flops=8,
    loads=6,
    stores=1,
    layout=Layout(extents=("ny", "nx"), arrays=4, halo=(2, 2), contiguous="nx", min_extent=2),
    description="first-order upwind (donor-cell) tracer advection on a periodic C grid",
    family="ocean",
)
