"""Batched Thomas solver: implicit vertical mixing of many water columns.

Paper 004 (DMI HBM report) section 10.1: the tridiagonal solve runs once per
water column, columns have different numbers of levels, and the recurrence
in each column is sequential, so the parallelism is across columns
(``prange``).  Each repetition is one mixing time step: the surface level is
heated by ``q``, then the column is solved in place.  The numpy reference
solves each column with LAPACK's banded solver, sharing no code with the step.
"""

from __future__ import annotations

from itertools import pairwise

import numpy as np

from ..arrays import aligned_empty
from ..declared import BuiltinKernel, builtin_info, output_at
from ..geometry import Geometry
from ..loops import prange

ORDER = 40  # the family's place in listings and in a collection's plan

INDEX_BYTES = 8  # column offsets of the batch are int64


def column_length(col, nlevels: int):
    """Levels in water column ``col`` (an int or an integer numpy array).

    Ocean columns differ in depth (paper 004 section 10.1: the Baltic Sea
    domain mixes 1-level and 100-level columns).  Lengths run from
    ceil(nlevels/2) to nlevels; the multiplier 37 scatters them so that
    neighbouring columns differ, deterministically.
    """
    low = (nlevels + 1) // 2
    return low + (col * 37) % (nlevels - low + 1)


def tridiag_points(ncols: int, nlevels: int) -> int:
    """Total levels over all columns, in O(nlevels) rather than O(ncols)."""
    span = nlevels - (nlevels + 1) // 2 + 1
    full, rest = divmod(ncols, span)
    period = sum(column_length(c, nlevels) for c in range(span))
    return full * period + sum(column_length(c, nlevels) for c in range(rest))


# Implicit vertical mixing (paper 004 section 10.1): one-hour step, 10 m layers,
# diffusivity decaying from a mixed layer to the background, 100 W/m^2 surface heating.
MIXING_DT = 3600.0
MIXING_DZ = 10.0
KAPPA_SURFACE, KAPPA_BACKGROUND, KAPPA_SCALE = 1e-2, 1e-5, 50.0
SURFACE_HEATING = 100.0 * MIXING_DT / (1025.0 * 3990.0 * MIXING_DZ)  # kelvin per step


def setup(shape: tuple[int, int], precision: str) -> tuple:
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


def tridiag(lower, diag, upper, x, scratch, start, q, r):
    for col in prange(start.size - 1):
        k0 = start[col]
        k1 = start[col + 1]
        x[k0] += q
        one = x.dtype.type(1.0)  # a float64 literal would promote float32 columns
        inv = one / diag[k0]
        scratch[k0] = upper[k0] * inv
        x[k0] = x[k0] * inv
        for k in range(k0 + 1, k1):
            inv = one / (diag[k] - lower[k] * scratch[k - 1])
            scratch[k] = upper[k] * inv
            x[k] = (x[k] - lower[k] * x[k - 1]) * inv
        for k in range(k1 - 2, k0 - 1, -1):
            x[k] -= scratch[k] * x[k + 1]


def reference(state: tuple, r: int) -> None:
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


BENCHDB_KERNELS = [
    BuiltinKernel(
        info=builtin_info(
            "tridiag",
            "tridiag",
            2,
            (13, 6, 3),
            5,
            "batched Thomas solve of implicit vertical mixing over water columns of "
            "varying length (paper 004 section 10.1); a point is one level of one column",
        ),
        geometry=Geometry(
            ndim=2,
            min_extent=1,
            points=lambda s: tridiag_points(*s),
            elements=lambda s: 5 * tridiag_points(*s),
            extra_bytes=lambda s: (s[0] + 1) * INDEX_BYTES,
        ),
        check_shape=(23, 10),
        setup=setup,
        step=tridiag,
        reference=reference,
        output=output_at(3),
    ),
]
