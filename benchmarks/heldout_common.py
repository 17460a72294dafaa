"""What the held-out benchmarks share: reading measured times back, and the statistics
of |predicted / measured - 1| and of the floor |measured again / measured - 1|.

Used by ``heldout.py`` (built-in kernels, repeats interleaved in one run) and
``heldout_programs.py`` (a user's program against the numba model).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from benchdb.db.engine import open_database
from benchdb.db.measurements import measurements_frame
from benchdb.predict.noise import pass_medians
from benchdb.shapes import shape_key


@dataclass(frozen=True)
class Stats:
    """Median, 90th percentile and maximum of |x| over the finite values (fractions)."""

    n: int
    median: float
    p90: float
    max: float

    @classmethod
    def of(cls, values: np.ndarray) -> Stats:
        e = np.abs(np.asarray(values, dtype=float))
        e = e[np.isfinite(e)]
        if not e.size:
            return cls(0, np.nan, np.nan, np.nan)
        return cls(int(e.size), float(np.median(e)), float(np.percentile(e, 90)), float(e.max()))


def summary(errors: np.ndarray) -> str:
    """One line: n, median, p90 and max of |errors| in %."""
    s = Stats.of(errors)
    if not s.n:
        return "no points"
    return (
        f"n={s.n:3d}  median {100 * s.median:5.1f} %  "
        f"p90 {100 * s.p90:5.1f} %  max {100 * s.max:5.1f} %"
    )


RESIDUE_WIDTH = 8
"""Row extents are filed modulo this many elements in the residue table, as
benchmarks/row_residue.py files them (a cache line of float64)."""


def by_residue(row_extents: Sequence[int], errors: dict[str, np.ndarray], label: str) -> list[str]:
    """The lines of a table: per kernel, the median signed error of the shapes whose row
    extent falls on each residue modulo :data:`RESIDUE_WIDTH`.  A loop whose rate depends
    on the row length modulo a SIMD vector (benchmarks/row_residue.py) shows it as a sign
    per column, which the medians of |error| hide."""
    residue = np.asarray(row_extents) % RESIDUE_WIDTH
    counts = "".join(f"{int((residue == r).sum()):>7d}" for r in range(RESIDUE_WIDTH))
    lines = [
        f"per kernel, median {label} error (signed) by row extent mod {RESIDUE_WIDTH}",
        f"  {'shapes':>16s}{counts}",
        f"  {'kernel':>16s}" + "".join(f"{r:>7d}" for r in range(RESIDUE_WIDTH)),
    ]
    for kernel, signed in errors.items():
        cells = []
        for r in range(RESIDUE_WIDTH):
            here = np.asarray(signed)[residue == r]
            here = here[np.isfinite(here)]
            cells.append(f"{100 * np.median(here):+.1f}" if here.size else "")
        lines.append(f"  {kernel:>16s}" + "".join(f"{c:>7s}" for c in cells))
    return lines


def _rows(url: str, kernel: str) -> dict[str, dict]:
    db = open_database(url, create=False)
    try:
        frame = measurements_frame(db, kernels=[kernel], valid_only=True)
    finally:
        db.close()
    return {row["shape_key"]: row for row in frame.to_dict("records")}


def measured(url: str, kernel: str, shapes: Sequence[Sequence[int]]) -> np.ndarray:
    """The stored median time per repetition of ``kernel`` at each shape (NaN if none)."""
    rows = _rows(url, kernel)
    return np.array([rows[k]["t_median"] if k in rows else np.nan for k in map(shape_key, shapes)])


def pass_times(
    url: str, kernel: str, shapes: Sequence[Sequence[int]]
) -> tuple[np.ndarray, np.ndarray]:
    """The medians of the first and the second pass of ``kernel`` at each shape (NaN if
    missing): the measurement and its repeat."""
    rows = _rows(url, kernel)
    first, second = [], []
    for key in map(shape_key, shapes):
        medians = pass_medians(rows[key]) if key in rows else []
        first.append(medians[0] if medians else np.nan)
        second.append(medians[1] if len(medians) > 1 else np.nan)
    return np.array(first), np.array(second)
