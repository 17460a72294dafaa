"""A Jacobi iteration for the 2D Poisson problem, the squared update accumulated in the
same sweep (the residual a solver tests for convergence).

Like the smoothing sweeps of :mod:`.stencil`, each repetition reads one array and
writes the other; the right-hand side makes the exact solution of the discrete
problem known, so a converged iterate is checked to round-off.
"""

from __future__ import annotations

from math import prod
from typing import Any

import numpy as np

from ..arrays import aligned_empty, aligned_full
from ..declared import BuiltinKernel, builtin_info, ping_pong_output
from ..geometry import Geometry, arrays_of, interior
from ..loops import prange
from .stencil import ping_pong, shifted

ORDER = 30  # the family's place in listings and in a collection's plan


def poisson_eigenvalue(shape: tuple[int, int]) -> float:
    """Eigenvalue of the 5-point Laplacian for sin(pi x) sin(pi y) on the grid of ``shape``."""
    return sum(4.0 / h**2 * np.sin(np.pi * h / 2) ** 2 for h in (1.0 / (n - 1) for n in shape))


def exact(shape: tuple[int, int]) -> np.ndarray:
    """sin(pi x) sin(pi y) on the grid: the solution of the discrete problem."""
    x, y = (np.linspace(0.0, 1.0, n) for n in shape)
    return np.outer(np.sin(np.pi * x), np.sin(np.pi * y))


def setup(shape: tuple[int, int], precision: str) -> tuple:
    """(u, v, g, wx, wy, residual) for -lap(u) = f on the unit square, u = 0 on the boundary.

    f = lambda_h sin(pi x) sin(pi y) with lambda_h the discrete eigenvalue, so
    the exact solution of the *discrete* problem is sin(pi x) sin(pi y): a
    converged Jacobi iterate can be checked to round-off, not to O(h^2).
    The update is u' = wx (uW + uE) + wy (uS + uN) + g with g = wf * f.
    """
    hx2, hy2 = ((1.0 / (n - 1)) ** 2 for n in shape)
    denom = 2.0 * (hx2 + hy2)
    g = aligned_empty(shape, precision)
    g[...] = hx2 * hy2 / denom * poisson_eigenvalue(shape) * exact(shape)
    u = aligned_full(shape, precision, 0.0)
    v = aligned_full(shape, precision, 0.0)
    real = np.dtype(precision).type
    return u, v, g, real(hy2 / denom), real(hx2 / denom), np.zeros(1)


def jacobi2d(u, v, g, wx, wy, residual, r):
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


def reference(state: tuple, r: int) -> None:
    """One Jacobi sweep; stores the squared norm of the update in ``residual[0]``."""
    u, v, g, wx, wy, residual = state
    src, dst = ping_pong(u, v, r)
    inner = (slice(1, -1), slice(1, -1))
    new = (
        wx * (src[shifted(2, 0, -1)] + src[shifted(2, 0, 1)])
        + wy * (src[shifted(2, 1, -1)] + src[shifted(2, 1, 1)])
        + g[inner]
    )
    residual[0] = np.sum((new.astype(np.float64) - src[inner]) ** 2)
    dst[inner] = new


JACOBI2D = BuiltinKernel(
    info=builtin_info(
        "jacobi2d",
        "stencil",
        2,
        (9, 4, 1),
        3,
        "one Jacobi iteration for the 2D Poisson problem -lap(u) = f with the squared "
        "update (the scaled residual) accumulated in the same sweep",
    ),
    geometry=Geometry(
        ndim=2, min_extent=3, points=interior, elements=arrays_of(3, prod), contiguous_axis=1
    ),
    check_shape=(13, 17),
    setup=setup,
    step=jacobi2d,
    reference=reference,
    output=ping_pong_output,
)

BENCHDB_KERNELS = [JACOBI2D]


def solve(
    shape: tuple[int, int], precision: str, tolerance: float, max_iterations: int, threads: int = 1
) -> tuple[Any, int]:
    """Jacobi iterations from :func:`setup` until the squared update norm drops to
    ``tolerance``; (solution, iterations).  Compiles the step (imports numba)."""
    from ..micro import iterate_until

    state = setup(shape, precision)
    step = JACOBI2D.compiled.step.for_threads(threads)
    iterations = iterate_until(step, state, state[-1], tolerance, max_iterations)
    return ping_pong_output(state, iterations), iterations
