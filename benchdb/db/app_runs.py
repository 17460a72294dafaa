"""Measured application runs: stored (:func:`store_app_runs`, the one constructor of
``app_run`` rows) and read back, one summary per ``app_run`` row.

Per-loop and per-exchange times are given for the slowest rank (the rank
with the largest total), which is what the model's "slowest rank wins"
compares with; ``untimed_s`` is that rank's time that no loop, exchange or
reduction timer covers; ``cpu_s`` its CPU time over the timed steps, where the
program reported it (a user's program, ``BENCHDB rank <r> cpu``), else None.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import select

from ..errors import UserError
from .engine import Database
from .models import AppRun, Run
from .runs import this_process_run
from .runstate import RunKind, RunStatus


def store_app_runs(
    db: Database,
    runs: Sequence[Mapping[str, Any]],
    *,
    kind: RunKind,
    tags: Sequence[str],
    config: dict[str, Any],
) -> list[int]:
    """One complete ``run`` row of this process holding an ``app_run`` row for each of
    ``runs`` (column values: the built-in model's and users' programs' runs alike, made by
    :func:`benchdb.collectors.app.collect.app_run_values`), in one transaction; their ids."""
    with db.session() as s:
        run = this_process_run(s, kind=kind, status=RunStatus.COMPLETE, config=config, tags=tags)
        made = [AppRun(run_id=run.id, **values) for values in runs]
        s.add_all(made)
        s.flush()
        return [row.id for row in made]


def _summary(row: AppRun, run: Run) -> dict[str, Any]:
    slowest = max(range(row.ranks), key=lambda r: row.rank_seconds[r])
    loops, exchanges = dict(row.loop_seconds[slowest]), dict(row.exchange_seconds[slowest])
    reduction = (row.info or {}).get("reduction_seconds", [0.0] * row.ranks)[slowest]
    timed = sum(loops.values()) + sum(exchanges.values()) + reduction
    return {
        "app_run_id": row.id,
        "application": row.application,
        "run_id": row.run_id,
        "machine_id": run.machine_id,
        "grid": list(row.grid),
        "decomposition": f"{row.px}x{row.py}",
        "ranks": row.ranks,
        "steps": row.steps,
        "precision": row.precision,
        "total_s": row.total_seconds,
        "rank_s": list(row.rank_seconds),
        "slowest_rank": slowest,
        "loops_s": loops,
        "exchanges_s": exchanges,
        "reduction_s": reduction,
        "untimed_s": row.rank_seconds[slowest] - timed,
        "cpu_s": (row.info or {}).get("cpu_seconds", [None] * row.ranks)[slowest],
        "energy": dict(row.energy or {}),
        "mass": row.checksum,
        "tags": list(run.tags or []),
        "created_at": row.created_at,
    }


def app_run_summary(db: Database, app_run_id: int) -> dict[str, Any]:
    with db.session() as s:
        row = s.get(AppRun, app_run_id)
        if row is None:
            raise UserError(f"no app run {app_run_id}; `benchdb app runs` lists them")
        return _summary(row, row.run)


def app_runs(
    db: Database, *, tag: str | None = None, application: str | None = None
) -> list[dict[str, Any]]:
    """Every stored app run (optionally with ``tag``, of ``application``), oldest first."""
    stmt = select(AppRun, Run).join(Run, AppRun.run_id == Run.id).order_by(AppRun.id)
    if application is not None:
        stmt = stmt.where(AppRun.application == application)
    with db.session() as s:
        rows = s.execute(stmt)
        out = [_summary(a, r) for a, r in rows]
    return [r for r in out if tag is None or tag in r["tags"]]
