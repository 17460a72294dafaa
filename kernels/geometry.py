"""Problem shapes: validation, points per repetition and memory footprint.

Each built-in family declares the geometry of its kernels in its own module
(:mod:`.builtin`); a user's kernel gets one from its layout (:mod:`.layout`).
Pure Python (no numpy, no numba) so that the predictor can compute the
footprint of any shape it is asked about (paper 003 eq. 9) without importing
the compiled code.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from math import prod
from typing import Any

from .basics import DTYPE_BYTES, Shape


def itemsize(precision: str) -> int:
    """Bytes per element; ``ValueError`` naming the valid precisions otherwise."""
    try:
        return DTYPE_BYTES[precision]
    except KeyError:
        valid = ", ".join(DTYPE_BYTES)
        raise ValueError(f"unknown precision {precision!r}; use one of: {valid}") from None


@dataclass(frozen=True)
class Geometry:
    """How a benchmark's shape maps to points and bytes.

    ``min_extent`` is the smallest allowed value of every extent (3 for
    stencils, which need an interior point).  ``points`` counts the points
    each repetition updates; ``elements`` the elements of all arrays.
    ``contiguous_axis`` is the axis the innermost loop runs along, contiguous
    in memory (0 for the shallow model's Fortran-ordered fields, the last for
    the C-ordered stencils); ``None`` where a block's aspect means nothing
    (1-D vectors, the tridiagonal batch of fixed-depth columns).  Blocks of
    one footprint but different row lengths run at different rates (loop
    overhead per row, Kerncraft's layer conditions), which the predictor
    measures and corrects for (:mod:`benchdb.predict.aspect`).
    """

    ndim: int
    min_extent: int
    points: Callable[[Shape], int]
    elements: Callable[[Shape], int]
    extra_bytes: Callable[[Shape], int] = lambda shape: 0
    contiguous_axis: int | None = None
    footprint: Callable[[Shape, int], int] | None = None  # bytes from (shape, itemsize)

    def validate(self, shape: Shape) -> Shape:
        """The shape as a tuple of ints; ``ValueError`` saying what is wrong otherwise."""
        try:
            shape = tuple(operator.index(n) for n in shape)
        except TypeError:
            raise ValueError(f"shape {shape!r} must be {self.ndim} integers") from None
        if len(shape) != self.ndim:
            raise ValueError(f"shape {shape!r} must be {self.ndim} integers")
        if min(shape) < self.min_extent:
            raise ValueError(f"shape {shape!r}: every extent must be >= {self.min_extent}")
        return shape

    def bytes_of(self, shape: Any, item_bytes: int) -> Any:
        """Footprint in bytes of ``shape``: a tuple of ints, or of numpy columns of many.

        ``footprint`` where given (a user's ``bytes`` expression), else the
        elements times the element size plus any extra bytes.
        """
        if self.footprint is not None:
            return self.footprint(shape, item_bytes)
        return self.elements(shape) * item_bytes + self.extra_bytes(shape)

    def footprint_bytes(self, shape: Shape, precision: str) -> int:
        shape = self.validate(shape)
        return int(self.bytes_of(shape, itemsize(precision)))


def interior(shape: Shape) -> int:
    """Points of a stencil sweep: all but the boundary layer of every extent."""
    return prod(n - 2 for n in shape)


def arrays_of(count: int, points_per_array: Callable[[Shape], int]) -> Callable[[Shape], int]:
    return lambda shape: count * points_per_array(shape)
