"""The pinned baseline run of each machine (``benchdb baseline``)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from ..db.engine import Database
from ..db.models import Baseline, Machine, Run, utcnow
from ..errors import UserError
from ..query import resolve_machine
from .describe import machine_summary, run_summary
from .runref import resolve_runs


def set_baseline(db: Database, ref: str, machine: str | None = None) -> dict[str, Any]:
    """Pin run ``ref`` as its machine's baseline; ``--machine`` must be the run's machine."""
    with db.session() as s:
        (run,) = resolve_runs(s, [ref], machine)
        if machine is not None:
            host = resolve_machine(s, machine)
            if host.id != run.machine_id:
                raise UserError(
                    f"run {run.id} was measured on machine {run.machine.hostname} "
                    f"({run.machine_id}), not {host.hostname} ({host.id}); a baseline must be "
                    "a run of its own machine: drop --machine or pick one of its runs"
                )
        if run.status == "running":
            raise UserError(f"run {run.id} is still running; pin it once it has finished")
        pinned = s.get(Baseline, run.machine_id)
        if pinned is None:
            s.add(Baseline(machine_id=run.machine_id, run_id=run.id, set_at=utcnow()))
        else:
            pinned.run_id, pinned.set_at = run.id, utcnow()
        return {**machine_summary(run.machine), **run_summary(run)}


def show_baselines(db: Database, machine: str | None = None) -> list[dict[str, Any]]:
    """Every machine's pinned baseline, or one machine's with ``machine``."""
    with db.session() as s:
        stmt = (
            select(Baseline, Machine, Run)
            .join(Machine, Baseline.machine_id == Machine.id)
            .join(Run, Baseline.run_id == Run.id)
        )
        if machine is not None:
            stmt = stmt.where(Baseline.machine_id == resolve_machine(s, machine).id)
        return [
            {**machine_summary(m), **run_summary(r), "set_at": b.set_at}
            for b, m, r in s.execute(stmt.order_by(Baseline.machine_id))
        ]
