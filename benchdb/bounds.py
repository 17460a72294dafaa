"""The largest integers benchdb takes: what a 64-bit column (and numpy's int64) holds.

Python's integers are unbounded, the database's and numpy's are not: a larger one
would fail deep inside a query or an array, after something had been written.
Every integer a user gives is checked against these bounds where it is read.
"""

from __future__ import annotations

from .errors import UserError

MAX_INT64 = 2**63 - 1
MAX_POINTS = 2**53
"""Points a shape may have: its footprint (points x bytes per point, at most 1 KiB) stays
exact in an int64 and in a float."""


def fits_int64(value: int) -> bool:
    return -MAX_INT64 - 1 <= value <= MAX_INT64


def parse_run_id(text: str, what: str = "run") -> int:
    """``text`` as a run id; UserError naming ``what`` unless it is a number a run id can be."""
    if not (text.isascii() and text.isdigit()) or not fits_int64(int(text)):
        raise UserError(f"{what} {text!r} is not a run id; give a number from `benchdb runs list`")
    return int(text)
