"""STREAM kernels (McCalpin): copy, scale, add, triad, plus a read-only sum and a
write-only fill, each a ``step(*state, r)`` over 1D contiguous arrays.

Byte counting (STREAM's and with write-allocate) is in the metadata,
:meth:`..api.KernelInfo.bytes_per_point`.
"""

from __future__ import annotations

from collections.abc import Callable
from math import prod

import numpy as np

from ..api import KernelInfo
from ..arrays import aligned_empty
from ..declared import BuiltinKernel, builtin_info, output_at
from ..geometry import Geometry, arrays_of
from ..loops import prange

ORDER = 50  # the family's place in listings and in a collection's plan

STREAM_SCALAR = 3.0
# STREAM's a, b, c: base value and ripple period of each array.
STREAM_PATTERNS = {"a": (1.0, 7), "b": (2.0, 5), "c": (0.5, 3)}


def _pattern(n: int, precision: str, base: float, period: int) -> np.ndarray:
    out = aligned_empty((n,), precision)
    out[...] = base + (np.arange(n) % period) / period
    return out


def setup_of(operands: str, extra: str = "") -> Callable[[tuple[int], str], tuple]:
    """The set-up of a kernel over arrays ``operands`` (their letters, in the step's
    argument order), then the scalar ``s`` or the sum's accumulator as ``extra`` says.

    STREAM's 1, 2, 0-like values with a ripple that makes an indexing error
    visible in the comparison with numpy.  Only the arrays the kernel uses are
    allocated, so the memory it needs is its footprint (``fill`` at 536 MiB
    allocates 536 MiB, not three arrays).
    """

    def setup(shape: tuple[int], precision: str) -> tuple:
        (n,) = shape
        arrays = tuple(_pattern(n, precision, *STREAM_PATTERNS[x]) for x in operands)
        scalar = {"s": (np.dtype(precision).type(STREAM_SCALAR),), "sum": (np.zeros(1),)}
        return (*arrays, *scalar.get(extra, ()))

    return setup


def copy(a, c, r):
    for i in prange(a.size):
        c[i] = a[i]


def scale(b, c, s, r):
    for i in prange(b.size):
        b[i] = s * c[i]


def add(a, b, c, r):
    for i in prange(a.size):
        c[i] = a[i] + b[i]


def triad(a, b, c, s, r):
    for i in prange(a.size):
        a[i] = b[i] + s * c[i]


def reduce_sum(a, out, r):
    total = a.dtype.type(0.0)  # accumulate in the working precision, as STREAM does
    for i in prange(a.size):
        total += a[i]
    out[0] += total


def fill(a, r):
    value = a.dtype.type(r + 1.0)  # differs every repetition, so no repetition is redundant
    for i in prange(a.size):
        a[i] = value


def copy_reference(state: tuple, r: int) -> None:
    a, c = state
    c[:] = a


def scale_reference(state: tuple, r: int) -> None:
    b, c, s = state
    b[:] = s * c


def add_reference(state: tuple, r: int) -> None:
    a, b, c = state
    c[:] = a + b


def triad_reference(state: tuple, r: int) -> None:
    a, b, c, s = state
    a[:] = b + s * c


def sum_reference(state: tuple, r: int) -> None:
    a, out = state
    out[0] += np.sum(a, dtype=np.float64)


def fill_reference(state: tuple, r: int) -> None:
    (a,) = state
    a[:] = r + 1.0


def _stream(
    op: str,
    formula: str,
    counts: tuple[int, int, int],
    operands: str,
    code: tuple[Callable[..., None], Callable[[tuple, int], None]],
    written: int,
    extra: str = "",
    write_allocate: bool = True,
) -> BuiltinKernel:
    """STREAM kernel ``op``: its (flops, loads, stores) per point, the arrays it takes
    (their count is its footprint's), its (step, reference) and the array it writes."""
    arrays = len(operands)
    return BuiltinKernel(
        info=builtin_info(
            f"stream.{op}",
            "stream",
            1,
            counts,
            arrays,
            f"STREAM-style {op}: {formula}",
            write_allocate=write_allocate,
        ),
        geometry=Geometry(ndim=1, min_extent=1, points=prod, elements=arrays_of(arrays, prod)),
        check_shape=(1001,),
        setup=setup_of(operands, extra),
        step=code[0],
        reference=code[1],
        output=output_at(written),
    )


BENCHDB_KERNELS = [
    _stream("copy", "c = a", (0, 1, 1), "ac", (copy, copy_reference), written=1),
    _stream("scale", "b = s*c", (1, 1, 1), "bc", (scale, scale_reference), 0, extra="s"),
    _stream("add", "c = a + b", (1, 2, 1), "abc", (add, add_reference), written=2),
    _stream("triad", "a = b + s*c", (2, 2, 1), "abc", (triad, triad_reference), 0, extra="s"),
    _stream(
        "sum",
        "read-only reduction s += a",
        (1, 1, 0),
        "a",
        (reduce_sum, sum_reference),
        written=1,
        extra="sum",
        write_allocate=False,
    ),
    _stream("fill", "write-only a = v", (0, 0, 1), "a", (fill, fill_reference), written=0),
]
STREAM_KERNELS: tuple[KernelInfo, ...] = tuple(k.info for k in BENCHDB_KERNELS)
