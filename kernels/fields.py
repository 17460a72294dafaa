"""Physically meaningful initial data for the micro-kernels (numpy only).

Every setup returns the *state tuple* the kernel's step works on: arrays
first, then scalars typed in the working precision (a float64 literal would
silently promote float32 arithmetic to float64 inside numba).
"""

from __future__ import annotations

import numpy as np

from .arrays import aligned_empty, aligned_full
from .geometry import column_length

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


def stencil(shape: tuple[int, ...], precision: str) -> tuple:
    """(a, b, c0, c1): a holds the hot spot, b its copy so both keep the boundary values."""
    a = hot_spot(shape, precision)
    b = aligned_empty(shape, precision)
    b[...] = a
    weights = STENCIL2D_WEIGHTS if len(shape) == 2 else STENCIL3D_WEIGHTS
    return (a, b, *(np.dtype(precision).type(w) for w in weights))


def poisson_eigenvalue(shape: tuple[int, int]) -> float:
    """Eigenvalue of the 5-point Laplacian for sin(pi x) sin(pi y) on the grid of ``shape``."""
    return sum(4.0 / h**2 * np.sin(np.pi * h / 2) ** 2 for h in (1.0 / (n - 1) for n in shape))


def jacobi(shape: tuple[int, int], precision: str) -> tuple:
    """(u, v, g, wx, wy, residual) for -lap(u) = f on the unit square, u = 0 on the boundary.

    f = lambda_h sin(pi x) sin(pi y) with lambda_h the discrete eigenvalue, so
    the exact solution of the *discrete* problem is sin(pi x) sin(pi y): a
    converged Jacobi iterate can be checked to round-off, not to O(h^2).
    The update is u' = wx (uW + uE) + wy (uS + uN) + g with g = wf * f.
    """
    hx2, hy2 = ((1.0 / (n - 1)) ** 2 for n in shape)
    denom = 2.0 * (hx2 + hy2)
    x, y = (np.linspace(0.0, 1.0, n) for n in shape)
    exact = np.outer(np.sin(np.pi * x), np.sin(np.pi * y))
    g = aligned_empty(shape, precision)
    g[...] = hx2 * hy2 / denom * poisson_eigenvalue(shape) * exact
    u = aligned_full(shape, precision, 0.0)
    v = aligned_full(shape, precision, 0.0)
    real = np.dtype(precision).type
    return u, v, g, real(hy2 / denom), real(hx2 / denom), np.zeros(1)


def jacobi_exact(shape: tuple[int, int]) -> np.ndarray:
    x, y = (np.linspace(0.0, 1.0, n) for n in shape)
    return np.outer(np.sin(np.pi * x), np.sin(np.pi * y))


# Implicit vertical mixing (paper 004 section 10.1): one-hour step, 10 m layers,
# diffusivity decaying from a mixed layer to the background, 100 W/m^2 surface heating.
MIXING_DT = 3600.0
MIXING_DZ = 10.0
KAPPA_SURFACE, KAPPA_BACKGROUND, KAPPA_SCALE = 1e-2, 1e-5, 50.0
SURFACE_HEATING = 100.0 * MIXING_DT / (1025.0 * 3990.0 * MIXING_DZ)  # kelvin per step


def tridiag(shape: tuple[int, int], precision: str) -> tuple:
    """(lower, diag, upper, x, scratch, start, q) for a batch of water columns.

    Columns are packed one after the other (``start`` holds the offsets), as
    the HBM code stores its compressed water columns.  Each row reads
    -r_up x[k-1] + (1 + r_up + r_dn) x[k] - r_dn x[k+1] = x_old[k], with no flux
    through the surface and the bottom, so the solve conserves heat and the
    only change of the column sum is the surface heating ``q`` added per step.
    """
    ncols, nlevels = shape
    lengths = column_length(np.arange(ncols, dtype=np.int64), nlevels)
    start = np.zeros(ncols + 1, dtype=np.int64)
    np.cumsum(lengths, out=start[1:])
    points = int(start[-1])
    level = np.arange(points) - np.repeat(start[:-1], lengths)
    depth_of_column = np.repeat(lengths, lengths)

    def mixing(interface_depth: np.ndarray) -> np.ndarray:
        kappa = KAPPA_BACKGROUND + KAPPA_SURFACE * np.exp(-interface_depth / KAPPA_SCALE)
        return kappa * MIXING_DT / MIXING_DZ**2

    r_up = np.where(level > 0, mixing(level * MIXING_DZ), 0.0)
    r_dn = np.where(level < depth_of_column - 1, mixing((level + 1) * MIXING_DZ), 0.0)
    temperature = 4.0 + 16.0 * np.exp(-(level + 0.5) * MIXING_DZ / 200.0)
    arrays = []
    for values in (-r_up, 1.0 + r_up + r_dn, -r_dn, temperature, np.zeros(points)):
        out = aligned_empty((points,), precision)
        out[...] = values
        arrays.append(out)
    return (*arrays, start, np.dtype(precision).type(SURFACE_HEATING))


STREAM_SCALAR = 3.0


def _pattern(n: int, precision: str, base: float, period: int) -> np.ndarray:
    out = aligned_empty((n,), precision)
    out[...] = base + (np.arange(n) % period) / period
    return out


# STREAM's a, b, c: base value and ripple period of each array.
STREAM_PATTERNS = {"a": (1.0, 7), "b": (2.0, 5), "c": (0.5, 3)}
# The arrays each kernel's step takes, in argument order (their count is its KernelInfo.arrays).
STREAM_OPERANDS = {
    "copy": "ac",
    "scale": "bc",
    "add": "abc",
    "triad": "abc",
    "sum": "a",
    "fill": "a",
}


def stream(kernel: str, n: int, precision: str) -> tuple:
    """The arrays (and scalar) of one STREAM kernel, STREAM's 1, 2, 0-like values with a ripple.

    Only the arrays the kernel uses are allocated, so the memory it needs is
    its footprint (``fill`` at 536 MiB allocates 536 MiB, not three arrays).
    The ripple makes an indexing error visible in the comparison with numpy.
    """
    arrays = tuple(_pattern(n, precision, *STREAM_PATTERNS[x]) for x in STREAM_OPERANDS[kernel])
    s = np.dtype(precision).type(STREAM_SCALAR)
    extra = {"scale": (s,), "triad": (s,), "sum": (np.zeros(1),)}.get(kernel, ())
    return (*arrays, *extra)
