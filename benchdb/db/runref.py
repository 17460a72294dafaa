"""Naming runs on the command line: an id, a tag, ``latest``, ``previous`` or ``baseline``.

* ``42``: run 42.
* ``latest``: the newest run of the node class that has kernel measurements
  and is not still running (of the one host with ``--host``); ``previous``:
  the one before it.
* ``baseline``: the run pinned with ``benchdb baseline set`` for the class.
* anything else is a tag given to ``benchdb collect --tag``; when several
  runs carry it, the newest one.

The node class for ``latest``/``previous``/``baseline`` is that of
``--machine``/``--host`` when given, else the class of the other (explicit)
run, else this machine's (:mod:`benchdb.db.scope`).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from itertools import islice

from sqlalchemy import exists
from sqlalchemy.orm import Session

from ..bounds import parse_run_id
from ..errors import UserError
from .models import Baseline, Measurement, Run
from .newest import runs_newest_first
from .runstate import RunStatus
from .scope import Scope, resolve_scope, scope_of_run

SYMBOLIC = ("latest", "previous", "baseline")


def measured_runs(
    session: Session,
    scope: Scope | None = None,
    *,
    environment_id: int | None = None,
    started_by: datetime | None = None,
) -> Iterator[Run]:
    """Finished runs holding kernel measurements (of ``scope``, in ``environment_id``,
    started at or before ``started_by``), newest first, read a page at a time: callers
    want the newest few of a history of thousands (:mod:`.newest`)."""
    where = [Run.status != RunStatus.RUNNING, exists().where(Measurement.run_id == Run.id)]
    if environment_id is not None:
        where.append(Run.environment_id == environment_id)
    if started_by is not None:
        where.append(Run.started_at <= started_by)
    yield from runs_newest_first(session, scope, *where)


def _known(session: Session) -> str:
    runs = list(islice(measured_runs(session), 8))
    if not runs:
        return "the database has no measured runs yet; run `benchdb collect` first"
    listed = ", ".join(f"{r.id}" + (f" [{', '.join(r.tags)}]" if r.tags else "") for r in runs)
    return f"recent runs (id [tags]): {listed}"


def resolve_explicit(session: Session, ref: str) -> Run | None:
    """A run by id or tag; None for the symbolic names; UserError when nothing matches."""
    if ref in SYMBOLIC:
        return None
    if ref.isdigit():
        run = session.get(Run, parse_run_id(ref))
        if run is None:
            raise UserError(f"no run {ref}; {_known(session)}")
        return run
    tagged = next((r for r in measured_runs(session) if ref in (r.tags or [])), None)
    if tagged is None:
        raise UserError(
            f"no run id or tag {ref!r} (use a run id, a tag, latest, previous or baseline); "
            f"{_known(session)}"
        )
    return tagged


def resolve_symbolic(session: Session, ref: str, scope: Scope) -> Run:
    """``latest``, ``previous`` or ``baseline`` of ``scope``."""
    if ref == "baseline":
        pinned = session.get(Baseline, scope.node_class_id)
        if pinned is None:
            raise UserError(
                f"no baseline pinned for node class {scope.node_class_id}; "
                "pin one with `benchdb baseline set RUN`"
            )
        return session.get(Run, pinned.run_id)  # type: ignore[return-value]  # the FK keeps it
    index = 0 if ref == "latest" else 1
    runs = list(islice(measured_runs(session, scope), index + 1))
    if len(runs) <= index:
        raise UserError(
            f"{scope.label} has {len(runs)} measured run(s), so there is no {ref!r} run; "
            "run `benchdb collect` or name runs by id"
        )
    return runs[index]


def resolve_runs(
    session: Session, refs: list[str], machine: str | None = None, host: str | None = None
) -> list[Run]:
    """Resolve several references together (see the module docstring for the class)."""
    explicit = [resolve_explicit(session, ref) for ref in refs]
    if all(run is not None for run in explicit):
        return [run for run in explicit if run is not None]
    named = [run for run in explicit if run is not None]
    if machine is not None or not named:
        scope = resolve_scope(session, machine, host)
    else:
        scope = scope_of_run(session, named[0], host)
    return [
        run if run is not None else resolve_symbolic(session, ref, scope)
        for ref, run in zip(refs, explicit, strict=True)
    ]
