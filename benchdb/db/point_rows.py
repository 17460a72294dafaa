"""A measured point's ``measurement`` columns as a plain, mutable record: the collectors
fill it pass by pass (:mod:`benchdb.collectors.record`) and this module stores it, or
loads a stored point to add a pass and writes it back.  The entity stays here."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from .models import Measurement


@dataclass
class PointRow:
    """One kernel at one point of a run, as its ``measurement`` row holds it; the
    statistics are None until the first pass (or failure) is summarised into it."""

    run_id: int
    kernel_id: int
    shape: list[int]
    shape_key: str
    points: int
    footprint_bytes: int
    threads: int
    placement: str
    precision: str
    context: str
    repetitions: int = 0
    passes: int = 0
    samples: list[float] = field(default_factory=list)
    evidence: dict[str, Any] = field(default_factory=dict)
    set_aside: dict[str, Any] = field(default_factory=dict)
    pass_counts: list[int] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    checksum: float | None = None
    t_min: float | None = None
    t_median: float | None = None
    t_iqr: float | None = None
    t_cv: float | None = None
    flop_rate: float | None = None
    byte_rate: float | None = None
    valid: bool = True


COLUMNS = tuple(f.name for f in fields(PointRow))


def add_points(session: Session, rows: Iterable[PointRow]) -> None:
    """Add ``rows`` as new ``measurement`` rows in ``session`` (committed with it)."""
    session.add_all(Measurement(**{c: getattr(r, c) for c in COLUMNS}) for r in rows)


def change_points(
    session: Session,
    *,
    run_id: int,
    kernel_ids: Sequence[int],
    shape_key: str,
    threads: int,
    precision: str,
    change: Callable[[PointRow], None],
) -> None:
    """Apply ``change`` to each stored row of run ``run_id`` at one point (its kernels
    ``kernel_ids``, shape, threads and precision) and write the row back."""
    stored = session.scalars(
        select(Measurement).where(
            Measurement.run_id == run_id,
            Measurement.kernel_id.in_(list(kernel_ids)),
            Measurement.shape_key == shape_key,
            Measurement.threads == threads,
            Measurement.precision == precision,
        )
    )
    for m in stored:
        row = PointRow(**{c: getattr(m, c) for c in COLUMNS})
        change(row)
        for c in COLUMNS:
            setattr(m, c, getattr(row, c))
