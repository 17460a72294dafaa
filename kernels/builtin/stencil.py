"""Stencil sweeps: 2D 5-point and 3D 7-point smoothing of a hot spot.

Each step reads one array and writes the other, alternating with the
repetition ``r``, so every repetition feeds the next and the compiler cannot
drop any of them.  The outermost interior index is the ``prange`` (rows are
contiguous, C order).  The numpy references are written with whole-array
slices, not loops, so that they share no code (and no bug) with the steps.
"""

from __future__ import annotations

from math import prod

import numpy as np

from ..api import KernelInfo
from ..arrays import aligned_empty, aligned_full
from ..declared import BuiltinKernel, builtin_info, ping_pong_output
from ..geometry import Geometry, arrays_of, interior
from ..loops import prange

ORDER = 20  # the family's place in listings and in a collection's plan

# Smoothing weights (sum to 1): one explicit diffusion step with nu*dt/h^2 = 1/8 (2D), 1/10 (3D).
STENCIL2D_WEIGHTS = (0.5, 0.125)
STENCIL3D_WEIGHTS = (0.4, 0.1)


def _grid(n: int, precision: str) -> np.ndarray:
    return np.linspace(0.0, 1.0, n).astype(precision)


def hot_spot(shape: tuple[int, ...], precision: str) -> np.ndarray:
    """Temperature 1 on the boundary plus a sine bump inside: diffusion changes its sum."""
    field = aligned_full(shape, precision, 1.0)
    bump = np.ones((), dtype=precision)
    for axis, n in enumerate(shape):
        profile = np.sin(np.pi * _grid(n, precision))
        bump = bump * profile.reshape([-1 if a == axis else 1 for a in range(len(shape))])
    field += bump
    return field


def setup(shape: tuple[int, ...], precision: str) -> tuple:
    """(a, b, c0, c1): a holds the hot spot, b its copy so both keep the boundary values."""
    a = hot_spot(shape, precision)
    b = aligned_empty(shape, precision)
    b[...] = a
    weights = STENCIL2D_WEIGHTS if len(shape) == 2 else STENCIL3D_WEIGHTS
    return (a, b, *(np.dtype(precision).type(w) for w in weights))


def stencil2d5(a, b, c0, c1, r):
    src, dst = (a, b) if r % 2 == 0 else (b, a)
    m, n = src.shape
    for i in prange(1, m - 1):
        for j in range(1, n - 1):
            dst[i, j] = c0 * src[i, j] + c1 * (
                src[i - 1, j] + src[i + 1, j] + src[i, j - 1] + src[i, j + 1]
            )


def stencil3d7(a, b, c0, c1, r):
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


def ping_pong(a: np.ndarray, b: np.ndarray, r: int) -> tuple[np.ndarray, np.ndarray]:
    """(source, destination) of repetition r: even reps read a, odd reps read b."""
    return (a, b) if r % 2 == 0 else (b, a)


def shifted(ndim: int, axis: int, shift: int) -> tuple[slice, ...]:
    """Interior slices of an ndim array moved by ``shift`` along ``axis``."""
    return tuple(
        slice(1 + shift, -1 + shift or None) if d == axis else slice(1, -1) for d in range(ndim)
    )


def reference(state: tuple, r: int) -> None:
    """2D 5-point or 3D 7-point smoothing: dst = c0*src + c1*(sum of 2*ndim neighbours)."""
    a, b, c0, c1 = state
    src, dst = ping_pong(a, b, r)
    inner = (slice(1, -1),) * src.ndim
    neighbours = sum(src[shifted(src.ndim, axis, s)] for axis in range(src.ndim) for s in (-1, 1))
    dst[inner] = c0 * src[inner] + c1 * neighbours


def _sweep(ndim: int, points: int, loads: int) -> KernelInfo:
    return builtin_info(
        f"stencil{ndim}d{points}",
        "stencil",
        ndim,
        (points + 1, loads, 1),
        2,
        f"{ndim}D {points}-point smoothing sweep b = c0*a + c1*({points - 1} neighbours) "
        "over interior points",
    )


def _geometry(ndim: int) -> Geometry:
    return Geometry(
        ndim=ndim,
        min_extent=3,
        points=interior,
        elements=arrays_of(2, prod),
        contiguous_axis=ndim - 1,
    )


BENCHDB_KERNELS = [
    BuiltinKernel(
        info=_sweep(2, 5, loads=3),
        geometry=_geometry(2),
        check_shape=(13, 17),
        setup=setup,
        step=stencil2d5,
        reference=reference,
        output=ping_pong_output,
    ),
    BuiltinKernel(
        info=_sweep(3, 7, loads=5),
        geometry=_geometry(3),
        check_shape=(7, 9, 11),
        setup=setup,
        step=stencil3d7,
        reference=reference,
        output=ping_pong_output,
    ),
]
