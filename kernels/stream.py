"""Compiled STREAM kernels (McCalpin): copy, scale, add, triad, plus a read-only
sum and a write-only fill, each a ``step(*state, r)`` over 1D contiguous arrays.

Byte counting (STREAM's and with write-allocate) is in the metadata,
:meth:`.api.KernelInfo.bytes_per_point`.
"""

from __future__ import annotations

from numba import prange

from .jit import variants


def _copy(a, c, r):
    for i in prange(a.size):
        c[i] = a[i]


def _scale(b, c, s, r):
    for i in prange(b.size):
        b[i] = s * c[i]


def _add(a, b, c, r):
    for i in prange(a.size):
        c[i] = a[i] + b[i]


def _triad(a, b, c, s, r):
    for i in prange(a.size):
        a[i] = b[i] + s * c[i]


def _sum(a, out, r):
    total = a.dtype.type(0.0)  # accumulate in the working precision, as STREAM does
    for i in prange(a.size):
        total += a[i]
    out[0] += total


def _fill(a, r):
    value = a.dtype.type(r + 1.0)  # differs every repetition, so no repetition is redundant
    for i in prange(a.size):
        a[i] = value


STREAM = {
    "copy": variants(_copy),
    "scale": variants(_scale),
    "add": variants(_add),
    "triad": variants(_triad),
    "sum": variants(_sum),
    "fill": variants(_fill),
}
