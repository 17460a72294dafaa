"""The life of a run: recorded as ``running``, ended ``complete``,
``interrupted`` (Ctrl-C, SIGTERM) or ``failed``.

Points are committed one by one inside the run, so whatever ends the process
leaves a consistent database: at most the point in flight is lost, and the
run's status says what happened.  A SIGKILL cannot be caught; such a run stays
``running`` and :func:`mark_stale_runs` settles it later.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from .. import scheduler
from ..environment import EnvironmentInfo, detect_environment
from ..machine import MachineInfo, detect_machine
from .engine import Database
from .models import Machine, Run
from .repo import register_environment, register_machine
from .run_records import point_counts
from .runstate import RunKind, RunStatus, utcnow
from .scope import resolve_scope
from .urls import redact_argv, redact_command


class Terminated(KeyboardInterrupt):
    """SIGTERM, delivered as an exception so cleanup code runs."""


@contextmanager
def sigterm_as_exception() -> Iterator[None]:
    """Raise :class:`Terminated` on SIGTERM inside the block.

    SIGTERM is also unblocked for the block: a blocked signal mask is inherited
    through fork and exec, so a collector started by a supervisor that blocks
    SIGTERM (a Python program calling ``pthread_sigmask``, some CI runners) would
    otherwise leave the signal pending, finish the whole sweep and exit 0.  A
    SIGTERM already pending is delivered as the block starts.
    """

    def _raise(signum: int, _frame: Any) -> None:
        raise Terminated(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, _raise)
    blocked = signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        signal.signal(signal.SIGTERM, previous)


REFINE_MODE = "refine"
ADVISE_MODE = "advise"
SUPPLEMENTS = {
    REFINE_MODE: "a refinement (benchdb refine)",
    ADVISE_MODE: "a measurement of padded shapes (benchdb advise --measure)",
}
"""Sweep modes (``config["mode"]``) of kernel runs that add points to earlier
collections instead of repeating one: they join the curves, but a report never
takes one for the newest collection to compare."""


def new_run_row(session: Session, *, command: str | Sequence[str], **fields: Any) -> Run:
    """Add a ``run`` row, flushed (its id set): the one place a run is made.

    ``command`` is the command line that made it: an argument vector (this process's) or
    text recorded elsewhere (an imported run).  Either way the password of every URL in it
    is masked (:mod:`benchdb.db.urls`): a password given in ``--db`` or ``BENCHDB_URL`` is
    never stored, so no export or report can pass it on.  ``fields`` are the other columns;
    ``uuid`` (the run's natural key) defaults to ``config["uuid"]``, else a fresh one.
    """
    text = redact_command(command) if isinstance(command, str) else redact_argv(command)
    fields.setdefault("uuid", (fields.get("config") or {}).get("uuid") or uuid.uuid4().hex)
    run = Run(command=text, **fields)
    session.add(run)
    session.flush()
    return run


def this_process_run(
    session: Session,
    *,
    kind: RunKind,
    status: str,
    config: dict[str, Any],
    tags: Sequence[str] = (),
    machine: MachineInfo | None = None,
    environment: EnvironmentInfo | None = None,
) -> Run:
    """A run of this process (:func:`new_run_row`): this machine and software, registered;
    this command line, host and process id; the scheduler's job it runs in, if any (so that
    :func:`is_stale` can tell when the job is gone); a ``complete`` one ended now."""
    m = register_machine(session, machine or detect_machine())
    e = register_environment(session, environment or detect_environment())
    return new_run_row(
        session,
        command=sys.argv,
        machine_id=m.id,
        environment_id=e.id,
        kind=kind,
        status=status,
        tags=list(tags),
        config=scheduler.with_current_job(config),
        hostname=socket.gethostname(),
        pid=os.getpid(),
        ended_at=utcnow() if status == RunStatus.COMPLETE else None,
    )


def start_run(
    db: Database,
    *,
    kind: RunKind,
    config: dict[str, Any],
    tags: list[str] | None = None,
    machine: MachineInfo | None = None,
    environment: EnvironmentInfo | None = None,
) -> Run:
    """Register machine and environment and insert a ``running`` run."""
    with db.session() as s:
        return this_process_run(
            s,
            kind=kind,
            status=RunStatus.RUNNING,
            config=config,
            tags=tags or (),
            machine=machine,
            environment=environment,
        )


def finish_run(db: Database, run_id: int, status: str) -> None:
    finish_runs(db, (run_id,), status)


def finish_runs(db: Database, run_ids: Sequence[int], status: str) -> None:
    """End runs ``run_ids`` with ``status`` in one transaction: the two runs of an A/B
    pair end together, so a kill cannot leave one complete and its partner unfinished."""
    ended = utcnow()
    with db.session() as s:
        for run in s.scalars(select(Run).where(Run.id.in_(run_ids))):
            run.status = status
            run.ended_at = ended


@dataclass
class Outcome:
    """A run's status if its block ends without an exception.

    ``complete``; the caller sets ``interrupted`` when it stops early (a time budget).
    """

    status: str = RunStatus.COMPLETE


@contextmanager
def run_lifecycle(db: Database, run_id: int, *partners: int) -> Iterator[Outcome]:
    """Record how the block over an existing run ``run_id`` (new or resumed), and over
    the ``partners`` that end with it, ends.

    Ctrl-C and SIGTERM (raised as :class:`Terminated`) end it ``interrupted``,
    any other exception ``failed``, a normal end ``outcome.status``.
    """
    outcome = Outcome()
    status = RunStatus.FAILED
    try:
        with sigterm_as_exception():
            yield outcome
        status = outcome.status
    except KeyboardInterrupt:
        status = RunStatus.INTERRUPTED
        raise
    finally:
        finish_runs(db, (run_id, *partners), status)


@contextmanager
def recorded_run(db: Database, **kwargs: Any) -> Iterator[Run]:
    """A new run (:func:`start_run`'s keywords) that ends as :func:`run_lifecycle` records."""
    run = start_run(db, **kwargs)
    with run_lifecycle(db, run.id):
        yield run


def _pid_alive(pid: int) -> bool:
    """Whether process ``pid`` still runs.  A zombie does not: it has exited and waits
    to be reaped (an MPI rank whose launcher died first waits for init, which in a
    container may take seconds)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no procfs (macOS): signal 0 is all there is
    return stat.rpartition(")")[2].split()[0] != "Z"


def is_stale(run: Run) -> bool:
    """A ``running`` run whose process is gone (killed, power loss): a run of this host
    whose process id is free, or a run of a scheduler's job that has ended (its process
    was on a node this one cannot see)."""
    if run.status != RunStatus.RUNNING:
        return False
    if run.hostname == socket.gethostname():
        return run.pid is None or not _pid_alive(run.pid)
    return scheduler.job_ended(run.config or {})


def mark_stale_runs(db: Database) -> int:
    """Mark ``interrupted`` the ``running`` runs whose process is gone (:func:`is_stale`)."""
    with db.session() as s:
        running = s.scalars(select(Run).where(Run.status == RunStatus.RUNNING))
        stale = [r for r in running if is_stale(r)]
        for r in stale:
            r.status = RunStatus.INTERRUPTED
        return len(stale)


def ab_pair(db: Database, run_id: int) -> dict[str, int] | None:
    """The two runs of the A/B pair (``benchdb ab``) that run ``run_id`` is one side of,
    by side (``{"base": id, "change": id}``); None for a run of no pair, or one whose
    partner this database lacks.  ``config["ab"]["pair"]`` holds the partner's uuid,
    which survives ``benchdb import``."""
    with db.reading() as s:
        run = s.get(Run, run_id)
        mine = ((run.config or {}).get("ab") or {}) if run is not None else {}
        if "pair" not in mine:
            return None
        partner = s.scalars(select(Run).where(Run.uuid == str(mine["pair"]))).first()
        if partner is None:
            return None
        return {mine["side"]: run_id, (partner.config.get("ab") or {})["side"]: partner.id}


def runs_with_config(db: Database, key: str, value: str) -> list[tuple[int, str]]:
    """(id, status) of the runs whose ``config[key]`` is ``value`` (text), oldest first:
    e.g. the runs a scheduler's job created or continued."""
    with db.reading() as s:
        rows = s.execute(
            select(Run.id, Run.status).where(Run.config[key].as_string() == value).order_by(Run.id)
        )
        return [(run_id, status) for run_id, status in rows]


def run_exists(db: Database, run_id: int) -> bool:
    """Whether the database holds run ``run_id``; writes nothing."""
    with db.reading() as s:
        return s.get(Run, run_id) is not None


def stored_runs(
    db: Database,
    *,
    machine: str | None = None,
    host: str | None = None,
    status: str | None = None,
    limit: int = 20,
) -> list[dict[str, Any]]:
    """The newest ``limit`` runs (of ``machine``'s node class or of ``host``, in
    ``status``), with their host, node class and point count (kernel points, or
    communication points of a comm run); writes nothing."""
    stmt = (
        select(Run, Machine)
        .join(Machine, Run.machine_id == Machine.id)
        .order_by(Run.id.desc())
        .limit(limit)
    )
    with db.reading() as s:
        if machine is not None or host is not None:
            stmt = stmt.where(resolve_scope(s, machine, host).runs())
        if status is not None:
            stmt = stmt.where(Run.status == status)
        found = s.execute(stmt).all()
        ids = [r.id for r, _ in found]
        counts = point_counts(s, ids, comm=True)
        return [
            {
                "id": r.id,
                "status": r.status,
                "stale": is_stale(r),
                "kind": r.kind,
                "machine_id": r.machine_id,
                "hostname": m.hostname,
                "node_class_id": m.node_class_id,
                "environment_id": r.environment_id,
                "mode": (r.config or {}).get("mode"),
                "planned_points": len((r.config or {}).get("points", [])) or None,
                "measurements": counts.get(r.id, 0),
                "started_at": r.started_at,
                "ended_at": r.ended_at,
                "tags": list(r.tags or []),
                "uuid": r.uuid,
            }
            for r, m in found
        ]
