"""numpy references of the micro-kernels, one repetition each.

Each function has the signature of the compiled step, ``step(state, r)`` with
``r`` the repetition index, and mutates the state tuple from
:mod:`.fields` in place.  They are written with whole-array slices, not
loops, so that they share no code (and no bug) with the numba kernels.
"""

from __future__ import annotations

from itertools import pairwise

import numpy as np


def ping_pong(a: np.ndarray, b: np.ndarray, r: int) -> tuple[np.ndarray, np.ndarray]:
    """(source, destination) of repetition r: even reps read a, odd reps read b."""
    return (a, b) if r % 2 == 0 else (b, a)


def _shifted(ndim: int, axis: int, shift: int) -> tuple[slice, ...]:
    """Interior slices of an ndim array moved by ``shift`` along ``axis``."""
    return tuple(
        slice(1 + shift, -1 + shift or None) if d == axis else slice(1, -1) for d in range(ndim)
    )


def stencil(state: tuple, r: int) -> None:
    """2D 5-point or 3D 7-point smoothing: dst = c0*src + c1*(sum of 2*ndim neighbours)."""
    a, b, c0, c1 = state
    src, dst = ping_pong(a, b, r)
    inner = (slice(1, -1),) * src.ndim
    neighbours = sum(src[_shifted(src.ndim, axis, s)] for axis in range(src.ndim) for s in (-1, 1))
    dst[inner] = c0 * src[inner] + c1 * neighbours


def jacobi2d(state: tuple, r: int) -> None:
    """One Jacobi sweep; stores the squared norm of the update in ``residual[0]``."""
    u, v, g, wx, wy, residual = state
    src, dst = ping_pong(u, v, r)
    inner = (slice(1, -1), slice(1, -1))
    new = (
        wx * (src[_shifted(2, 0, -1)] + src[_shifted(2, 0, 1)])
        + wy * (src[_shifted(2, 1, -1)] + src[_shifted(2, 1, 1)])
        + g[inner]
    )
    residual[0] = np.sum((new.astype(np.float64) - src[inner]) ** 2)
    dst[inner] = new


def tridiag(state: tuple, r: int) -> None:
    """Surface heating, then implicit mixing column by column with LAPACK's banded solver."""
    from scipy.linalg import solve_banded

    lower, diag, upper, x, _, start, q = state
    for k0, k1 in pairwise(start):
        x[k0] += q
        bands = np.zeros((3, k1 - k0), dtype=np.float64)
        bands[0, 1:] = upper[k0 : k1 - 1]
        bands[1] = diag[k0:k1]
        bands[2, :-1] = lower[k0 + 1 : k1]
        x[k0:k1] = solve_banded((1, 1), bands, x[k0:k1].astype(np.float64))


def stream_copy(state: tuple, r: int) -> None:
    a, c = state
    c[:] = a


def stream_scale(state: tuple, r: int) -> None:
    b, c, s = state
    b[:] = s * c


def stream_add(state: tuple, r: int) -> None:
    a, b, c = state
    c[:] = a + b


def stream_triad(state: tuple, r: int) -> None:
    a, b, c, s = state
    a[:] = b + s * c


def stream_sum(state: tuple, r: int) -> None:
    a, out = state
    out[0] += np.sum(a, dtype=np.float64)


def stream_fill(state: tuple, r: int) -> None:
    (a,) = state
    a[:] = r + 1.0
