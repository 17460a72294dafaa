"""Allocation helpers shared by every family's setup."""

from __future__ import annotations

import numpy as np

ALIGN = 64  # one cache line and one AVX-512 vector


def aligned_empty(shape: tuple[int, ...], precision: str, order: str = "C") -> np.ndarray:
    """An uninitialised array whose first element sits on a cache-line boundary.

    numpy only guarantees 16-byte alignment; the C triad compiled with gcc gets
    the same 64-byte-aligned buffers, so the comparison is like for like.
    """
    dtype = np.dtype(precision)
    count = int(np.prod(shape))
    raw = np.empty(count * dtype.itemsize + ALIGN, dtype=np.uint8)
    start = -raw.ctypes.data % ALIGN
    flat = raw[start : start + count * dtype.itemsize].view(dtype)
    return flat.reshape(shape, order=order)


def aligned_full(
    shape: tuple[int, ...], precision: str, value: float, order: str = "C"
) -> np.ndarray:
    out = aligned_empty(shape, precision, order)
    out[...] = value
    return out
