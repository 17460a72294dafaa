"""A sample's evidence: whether the operating system says it measured the code.

A sample taken while the measuring thread waited for its CPU, or while the
hypervisor gave its virtual CPU to another guest, measured the neighbour.  The
collectors read the evidence (:mod:`benchdb.collectors.probes`); this module
holds what it is and how it is judged, for every reader of stored samples.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

LOST_FRACTION = 0.01
"""A sample that lost more than this share of its wall time to other tasks is disturbed
(chosen from measurements: docs/findings/disturbance.md)."""


@dataclass(frozen=True)
class Evidence:
    """One sample's window as the operating system accounted it (seconds, counts).

    ``wait_s`` is None where the kernel keeps no run-queue delay (no schedstat, a
    child process); ``steal_s`` None where it reports no steal.  ``others_busy_s``:
    how long the CPUs the sample could not run on were busy (None: no such CPU, or
    recorded before it was read); evidence of a neighbour that takes no CPU time from
    the sample, not a reason to set it aside.  ``timed_s``: the part of the window
    the sample reports, where that is less than the window -- a program in a child
    process times its own loops, while the window also holds its start-up and
    set-up; None where the sample is the whole window.
    """

    wall_s: float
    cpu_s: float
    wait_s: float | None
    nivcsw: int
    steal_s: float | None
    lost_s: float
    others_busy_s: float | None = None
    timed_s: float | None = None

    @property
    def disturbed(self) -> bool:
        """Lost more than :data:`LOST_FRACTION` of the time the sample reports.  Where the
        lost time fell inside the window cannot be told, so a program's is set against
        its timed part, not its whole run: a scheduler slice lost during a 3 ms step is
        a third of that step's sample, however long the process took to start."""
        return self.lost_s > LOST_FRACTION * (self.timed_s or self.wall_s)


def lost_fraction(evidence: Evidence) -> float:
    """The share of the time it reports that a sample lost to other tasks."""
    base = evidence.timed_s or evidence.wall_s
    return evidence.lost_s / base if base > 0 else 0.0


def most_disturbed(evidence: Sequence[Evidence]) -> Evidence:
    """The evidence of a sample that several processes took in lock step (MPI ranks
    started by a barrier): that of the one which lost the largest share of its wall
    time.  One rank off its core holds up the others, so the sample is as disturbed
    as its most disturbed rank."""
    return max(evidence, key=lost_fraction)


def kept_and_set_aside(clean: Sequence[bool]) -> tuple[list[int], list[int]]:
    """Which samples a statistic uses, and which are set aside, by index, given whether
    each is clean (:attr:`Evidence.disturbed` not set; no evidence counts as clean): the
    clean ones and the rest; every sample where none is clean (its median then stands
    for what was measured, flagged)."""
    keep = [i for i, ok in enumerate(clean) if ok]
    if not keep:
        return list(range(len(clean))), []
    return keep, [i for i, ok in enumerate(clean) if not ok]


FIELDS = tuple(Evidence.__dataclass_fields__)
_DIGITS = 7  # seconds are stored to 0.1 us: the probe's own cost is tens of microseconds

Columns = Mapping[str, Sequence[Any]]


def _stored(value: float | int | None) -> float | int | None:
    return round(value, _DIGITS) if isinstance(value, float) else value


def to_columns(evidence: Sequence[Evidence | None]) -> dict[str, list[Any]]:
    """The evidence of a row's samples as stored: one list per field, in the samples'
    order (each name once per row, not once per sample); ``None`` where a sample has
    none; ``{}`` where none has."""
    if all(e is None for e in evidence):
        return {}
    return {f: [None if e is None else _stored(getattr(e, f)) for e in evidence] for f in FIELDS}


def from_columns(columns: Columns | Sequence[Any] | None, n: int) -> list[Evidence | None]:
    """The evidence of ``n`` samples stored by :func:`to_columns`; ``None`` for each sample
    without (rows collected before evidence was read store ``[]``)."""
    if not isinstance(columns, Mapping) or not columns:
        return [None] * n

    def at(field: str, i: int) -> Any:
        values = columns.get(field) or []
        return values[i] if i < len(values) else None

    return [
        None if at("wall_s", i) is None else Evidence(**{f: at(f, i) for f in FIELDS})
        for i in range(n)
    ]


def set_aside_count(set_aside: Columns | Sequence[Any] | None) -> int:
    """How many disturbed samples a row set aside (its ``set_aside`` column)."""
    return len(set_aside.get("t_s") or []) if isinstance(set_aside, Mapping) else 0


def lost_share(evidence: Columns | Sequence[Any] | None) -> float | None:
    """The median share of its time a sample lost (:func:`lost_fraction`), over a row's
    stored ``evidence`` (:func:`to_columns`); None where no sample has any (collected
    without evidence)."""
    if not isinstance(evidence, Mapping) or not evidence:
        return None
    n = len(evidence.get("wall_s") or [])
    shares = [lost_fraction(e) for e in from_columns(evidence, n) if e is not None]
    return statistics.median(shares) if shares else None
