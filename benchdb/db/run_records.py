"""Runs as plain values, for the modules that judge them (which two runs a report
compares, a baseline's replicates): they read a run's kind, settings, time and class,
never its row, so the entities stay in this package."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from .models import Baseline, CommMeasurement, Measurement, Run
from .runref import measured_runs
from .scope import Scope


@dataclass(frozen=True)
class RunRecord:
    """What a run measured, when, on which node class and in which software."""

    id: int
    kind: str
    status: str
    tags: tuple[str, ...]
    config: dict[str, Any]
    started_at: datetime
    environment_id: int
    machine_id: int
    node_class_id: int


def run_record(run: Run) -> RunRecord:
    """``run``'s values (its host read for the node class: within the run's session)."""
    return RunRecord(
        id=run.id,
        kind=run.kind,
        status=run.status,
        tags=tuple(run.tags or ()),
        config=dict(run.config or {}),
        started_at=run.started_at,
        environment_id=run.environment_id,
        machine_id=run.machine_id,
        node_class_id=run.machine.node_class_id,
    )


def measured_run_records(
    session: Session, scope: Scope | None = None, **only: Any
) -> Iterator[RunRecord]:
    """:func:`~benchdb.db.runref.measured_runs` as values (``only``: its filters): finished
    runs holding kernel measurements (of ``scope``), newest first, read as the caller goes."""
    return (run_record(run) for run in measured_runs(session, scope, **only))


def pinned_baseline(session: Session, node_class_id: int) -> RunRecord | None:
    """The run pinned as node class ``node_class_id``'s baseline; None when none is."""
    pinned = session.get(Baseline, node_class_id)
    run = session.get(Run, pinned.run_id) if pinned is not None else None
    return run_record(run) if run is not None else None


def point_counts(session: Session, run_ids: Sequence[int], *, comm: bool = False) -> dict[int, int]:
    """Kernel measurements (and with ``comm`` communication points) of each of ``run_ids``,
    by run id (runs with none left out): counted for these runs only, by the run_id
    indexes, never over the whole table."""
    counts: dict[int, int] = {}
    for table in (Measurement, CommMeasurement) if comm else (Measurement,):
        rows = session.execute(
            select(table.run_id, func.count())
            .where(table.run_id.in_(list(run_ids)))
            .group_by(table.run_id)
        )
        for run_id, n in rows:
            counts[int(run_id)] = counts.get(int(run_id), 0) + int(n)
    return counts
