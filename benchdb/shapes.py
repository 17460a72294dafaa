"""Problem shapes as text: ``600x400`` and back, with one-line errors for shapes no
problem can have.  Its own module because most of the tree needs shapes and nothing
else of the read path (:mod:`benchdb.db.measurements`)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from .bounds import MAX_POINTS
from .errors import UserError


def shape_key(shape: Sequence[int]) -> str:
    """(600, 400) -> '600x400': the canonical text form of a problem shape."""
    return "x".join(str(int(d)) for d in shape)


def parse_shape(text: str, ndim: int | None = None) -> tuple[int, ...]:
    """'600x400' -> (600, 400); one-line errors for zero, negative or malformed shapes."""
    parts = text.lower().replace("×", "x").split("x")
    try:
        shape = tuple(int(p) for p in parts)
    except ValueError:
        raise UserError(
            f"shape {text!r} is not like 600x400; give positive integers separated by 'x'"
        ) from None
    if any(d <= 0 for d in shape):
        raise UserError(
            f"shape {text!r} has a zero or negative extent; every extent must be a positive integer"
        )
    if math.prod(shape) > MAX_POINTS:
        raise UserError(
            f"shape {text!r} has more than 2**53 points, more than any machine holds; "
            "give the extents of a problem that fits in memory"
        )
    if ndim is not None and len(shape) != ndim:
        raise UserError(
            f"shape {text!r} has {len(shape)} extent(s) but this kernel takes "
            f"{ndim} (e.g. {'x'.join(['100'] * ndim)})"
        )
    return shape
