"""Naming runs on the command line: an id, a tag, ``latest``, ``previous`` or ``baseline``.

* ``42``: run 42.
* ``latest``: the newest run on the machine that has kernel measurements and
  is not still running; ``previous``: the one before it.
* ``baseline``: the run pinned with ``benchdb baseline set`` for the machine.
* anything else is a tag given to ``benchdb collect --tag``; when several
  runs carry it, the newest one.

The machine for ``latest``/``previous``/``baseline`` is ``--machine`` when
given, else the machine of the other (explicit) run, else this machine.
"""

from __future__ import annotations

from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from ..db.models import Baseline, Machine, Measurement, Run
from ..errors import UserError
from ..query import resolve_machine

SYMBOLIC = ("latest", "previous", "baseline")


def measured_runs(session: Session, machine_id: int | None = None) -> list[Run]:
    """Finished runs holding kernel measurements, newest first."""
    stmt = (
        select(Run)
        .where(Run.status != "running", exists().where(Measurement.run_id == Run.id))
        .order_by(Run.started_at.desc(), Run.id.desc())
    )
    if machine_id is not None:
        stmt = stmt.where(Run.machine_id == machine_id)
    return list(session.scalars(stmt))


def _known(session: Session) -> str:
    runs = measured_runs(session)[:8]
    if not runs:
        return "the database has no measured runs yet; run `benchdb collect` first"
    listed = ", ".join(f"{r.id}" + (f" [{', '.join(r.tags)}]" if r.tags else "") for r in runs)
    return f"recent runs (id [tags]): {listed}"


def resolve_explicit(session: Session, ref: str) -> Run | None:
    """A run by id or tag; None for the symbolic names; UserError when nothing matches."""
    if ref in SYMBOLIC:
        return None
    if ref.isdigit():
        run = session.get(Run, int(ref))
        if run is None:
            raise UserError(f"no run {ref}; {_known(session)}")
        return run
    tagged = [r for r in measured_runs(session) if ref in (r.tags or [])]
    if not tagged:
        raise UserError(
            f"no run id or tag {ref!r} (use a run id, a tag, latest, previous or baseline); "
            f"{_known(session)}"
        )
    return tagged[0]


def resolve_symbolic(session: Session, ref: str, machine: Machine) -> Run:
    """``latest``, ``previous`` or ``baseline`` on ``machine``."""
    if ref == "baseline":
        pinned = session.get(Baseline, machine.id)
        if pinned is None:
            raise UserError(
                f"no baseline pinned for machine {machine.id} ({machine.hostname}); "
                "pin one with `benchdb baseline set RUN`"
            )
        return session.get_one(Run, pinned.run_id)
    runs = measured_runs(session, machine.id)
    index = 0 if ref == "latest" else 1
    if len(runs) <= index:
        raise UserError(
            f"machine {machine.id} ({machine.hostname}) has {len(runs)} measured run(s), "
            f"so there is no {ref!r} run; run `benchdb collect` or name runs by id"
        )
    return runs[index]


def resolve_runs(session: Session, refs: list[str], machine: str | None = None) -> list[Run]:
    """Resolve several references together (see the module docstring for the machine)."""
    explicit = [resolve_explicit(session, ref) for ref in refs]
    if all(run is not None for run in explicit):
        return [run for run in explicit if run is not None]
    named = [run for run in explicit if run is not None]
    if machine is not None:
        host = resolve_machine(session, machine)
    else:
        host = named[0].machine if named else resolve_machine(session, None)
    return [
        run if run is not None else resolve_symbolic(session, ref, host)
        for ref, run in zip(refs, explicit, strict=True)
    ]
