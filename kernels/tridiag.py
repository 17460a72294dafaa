"""Compiled batched Thomas solver: implicit vertical mixing of many water columns.

Paper 004 (DMI HBM report) section 10.1: the tridiagonal solve runs once per
water column, columns have different numbers of levels, and the recurrence
in each column is sequential, so the parallelism is across columns
(``prange``).  Each repetition is one mixing time step: the surface level is
heated by ``q``, then the column is solved in place.
"""

from __future__ import annotations

from numba import prange

from .jit import variants


def _tridiag(lower, diag, upper, x, scratch, start, q, r):
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


TRIDIAG = variants(_tridiag)
