"""Compiled stencil sweeps: 2D 5-point, 3D 7-point and a Jacobi Poisson iteration.

Each is a ``step(*state, r)`` on the state tuple from :mod:`.fields`; repetition
``r`` reads one array and writes the other, alternating, so every repetition
feeds the next and the compiler cannot drop any of them.  The outermost
interior index is the ``prange`` (rows are contiguous, C order).
"""

from __future__ import annotations

from numba import prange

from .jit import variants


def _stencil2d5(a, b, c0, c1, r):
    src, dst = (a, b) if r % 2 == 0 else (b, a)
    m, n = src.shape
    for i in prange(1, m - 1):
        for j in range(1, n - 1):
            dst[i, j] = c0 * src[i, j] + c1 * (
                src[i - 1, j] + src[i + 1, j] + src[i, j - 1] + src[i, j + 1]
            )


def _stencil3d7(a, b, c0, c1, r):
    src, dst = (a, b) if r % 2 == 0 else (b, a)
    m, n, p = src.shape
    for i in prange(1, m - 1):
        for j in range(1, n - 1):
            for k in range(1, p - 1):
                dst[i, j, k] = c0 * src[i, j, k] + c1 * (
                    src[i - 1, j, k]
                    + src[i + 1, j, k]
                    + src[i, j - 1, k]
                    + src[i, j + 1, k]
                    + src[i, j, k - 1]
                    + src[i, j, k + 1]
                )


def _jacobi2d(u, v, g, wx, wy, residual, r):
    src, dst = (u, v) if r % 2 == 0 else (v, u)
    m, n = src.shape
    acc = 0.0
    for i in prange(1, m - 1):
        for j in range(1, n - 1):
            new = (
                wx * (src[i - 1, j] + src[i + 1, j])
                + wy * (src[i, j - 1] + src[i, j + 1])
                + g[i, j]
            )
            change = new - src[i, j]
            acc += change * change
            dst[i, j] = new
    residual[0] = acc


STENCIL2D5 = variants(_stencil2d5)
STENCIL3D7 = variants(_stencil3d7)
JACOBI2D = variants(_jacobi2d)
