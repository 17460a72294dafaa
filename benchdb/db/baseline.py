"""The pinned baseline run of each node class (``benchdb baseline``), and why it was reset.

Per class, not per host (see :class:`benchdb.db.models.Baseline`): ``compare
baseline latest`` then compares a class's newest run, on whichever node it
ran, with the run pinned for the class.  Pinning a new baseline accepts its
level as the reference: after an intended slowdown (a correctness fix, a new
compiler), the step would otherwise fail every later comparison.  Conbench
users mark such a run as a "distribution change"; here every pin is kept in
``baseline_change`` with the reason given, and ``benchdb history`` shows the
resets beside the steps they explain.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from ..errors import UserError
from .describe import machine_summary, run_summary
from .engine import Database
from .models import Baseline, BaselineChange, Machine, Run
from .runref import resolve_runs
from .runstate import RunStatus, utcnow
from .scope import resolve_scope

MAX_REASON = 500
"""Longest reason kept (characters): a sentence, with an issue or commit to follow."""


def clean_reason(reason: str | None) -> str | None:
    """The reason on one line; ``UserError`` for an empty or overlong one."""
    if reason is None:
        return None
    text = " ".join(reason.split())
    if not text:
        raise UserError(
            "--reason is empty; say why in words, e.g. --reason 'gcc 13: stencil 8% slower, "
            "accepted'"
        )
    if len(text) > MAX_REASON:
        raise UserError(
            f"--reason has {len(text)} characters; keep it under {MAX_REASON} and link to "
            "the details (an issue, a commit)"
        )
    return text


def set_baseline(
    db: Database,
    ref: str,
    machine: str | None = None,
    host: str | None = None,
    reason: str | None = None,
) -> dict[str, Any]:
    """Pin run ``ref`` as its node class's baseline; ``--machine`` must be the run's class.

    The pin is recorded with ``reason`` (None: none given) and the run it replaces.
    """
    why = clean_reason(reason)
    with db.session() as s:
        (run,) = resolve_runs(s, [ref], machine, host)
        if machine is not None or host is not None:
            scope = resolve_scope(s, machine, host)
            if scope.node_class_id != run.machine.node_class_id:
                raise UserError(
                    f"run {run.id} was measured on host {run.machine.hostname} of node class "
                    f"{run.machine.node_class_id}, not on {scope.label}; a baseline must be a "
                    "run of its own class: drop --machine/--host or pick one of its runs"
                )
        if run.status == RunStatus.RUNNING:
            raise UserError(f"run {run.id} is still running; pin it once it has finished")
        class_id = run.machine.node_class_id
        pinned = s.get(Baseline, class_id)
        previous = pinned.run_id if pinned is not None else None
        now = utcnow()
        if pinned is None:
            s.add(Baseline(node_class_id=class_id, run_id=run.id, set_at=now))
        else:
            pinned.run_id, pinned.set_at = run.id, now
        s.add(
            BaselineChange(
                node_class_id=class_id,
                run_id=run.id,
                previous_run_id=previous,
                reason=why,
                set_at=now,
            )
        )
        return {
            **machine_summary(run.machine),
            **run_summary(run),
            "previous_run_id": previous,
            "reason": why,
        }


def _latest_reasons(db: Database) -> dict[tuple[int, int], str | None]:
    """The reason of the newest change per (node class, run)."""
    with db.reading() as s:
        rows = s.execute(
            select(
                BaselineChange.node_class_id, BaselineChange.run_id, BaselineChange.reason
            ).order_by(BaselineChange.set_at, BaselineChange.id)
        )
        return {(c, r): why for c, r, why in rows}


def show_baselines(
    db: Database, machine: str | None = None, host: str | None = None
) -> list[dict[str, Any]]:
    """Every node class's pinned baseline (with the reason it was pinned), or one class's
    with ``machine``/``host``."""
    reasons = _latest_reasons(db)
    with db.reading() as s:
        stmt = (
            select(Baseline, Run, Machine)
            .join(Run, Baseline.run_id == Run.id)
            .join(Machine, Run.machine_id == Machine.id)
        )
        if machine is not None or host is not None:
            scope = resolve_scope(s, machine, host)
            stmt = stmt.where(Baseline.node_class_id == scope.node_class_id)
        return [
            {
                **machine_summary(m),
                **run_summary(r),
                "set_at": b.set_at,
                "reason": reasons.get((b.node_class_id, r.id)),
            }
            for b, r, m in s.execute(stmt.order_by(Baseline.node_class_id))
        ]


def baseline_changes(db: Database, node_class_id: int) -> list[dict[str, Any]]:
    """Every pin of a node class's baseline, oldest first, with the run's start time."""
    with db.reading() as s:
        rows = s.execute(
            select(BaselineChange, Run)
            .join(Run, BaselineChange.run_id == Run.id)
            .where(BaselineChange.node_class_id == node_class_id)
            .order_by(BaselineChange.set_at, BaselineChange.id)
        )
        return [
            {
                "run_id": c.run_id,
                "run_tags": list(r.tags or []),
                "run_started_at": r.started_at,
                "previous_run_id": c.previous_run_id,
                "reason": c.reason,
                "set_at": c.set_at,
            }
            for c, r in rows
        ]
