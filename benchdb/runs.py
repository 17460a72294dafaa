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
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from .db.engine import Database
from .db.models import Run, utcnow
from .db.repo import register_environment, register_machine
from .environment import EnvironmentInfo, detect_environment
from .machine import MachineInfo, detect_machine


class Terminated(KeyboardInterrupt):
    """SIGTERM, delivered as an exception so cleanup code runs."""


@contextmanager
def sigterm_as_exception() -> Iterator[None]:
    def _raise(signum: int, _frame: Any) -> None:
        raise Terminated(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, _raise)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def start_run(
    db: Database,
    *,
    kind: str,
    config: dict[str, Any],
    tags: list[str] | None = None,
    machine: MachineInfo | None = None,
    environment: EnvironmentInfo | None = None,
) -> Run:
    """Register machine and environment and insert a ``running`` run."""
    with db.session() as s:
        m = register_machine(s, machine or detect_machine())
        e = register_environment(s, environment or detect_environment())
        run = Run(
            machine_id=m.id,
            environment_id=e.id,
            kind=kind,
            status="running",
            command=" ".join(sys.argv),
            tags=list(tags or []),
            config=config,
            hostname=socket.gethostname(),
            pid=os.getpid(),
        )
        s.add(run)
        s.flush()
        return run


def finish_run(db: Database, run_id: int, status: str) -> None:
    with db.session() as s:
        run = s.get(Run, run_id)
        if run is not None:
            run.status = status
            run.ended_at = utcnow()


@dataclass
class Outcome:
    """A run's status if its block ends without an exception.

    ``complete``; the caller sets ``interrupted`` when it stops early (a time budget).
    """

    status: str = "complete"


@contextmanager
def run_lifecycle(db: Database, run_id: int) -> Iterator[Outcome]:
    """Record how the block over an existing run ``run_id`` (new or resumed) ends.

    Ctrl-C and SIGTERM (raised as :class:`Terminated`) end it ``interrupted``,
    any other exception ``failed``, a normal end ``outcome.status``.
    """
    outcome = Outcome()
    status = "failed"
    try:
        with sigterm_as_exception():
            yield outcome
        status = outcome.status
    except KeyboardInterrupt:
        status = "interrupted"
        raise
    finally:
        finish_run(db, run_id, status)


@contextmanager
def recorded_run(db: Database, **kwargs: Any) -> Iterator[Run]:
    """A new run (:func:`start_run`'s keywords) that ends as :func:`run_lifecycle` records."""
    run = start_run(db, **kwargs)
    with run_lifecycle(db, run.id):
        yield run


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def is_stale(run: Run) -> bool:
    """A ``running`` run of this host whose process is gone (killed, power loss)."""
    return (
        run.status == "running"
        and run.hostname == socket.gethostname()
        and (run.pid is None or not _pid_alive(run.pid))
    )


def mark_stale_runs(db: Database) -> int:
    """Mark ``interrupted`` this host's ``running`` runs whose process is gone."""
    host = socket.gethostname()
    with db.session() as s:
        running = s.scalars(select(Run).where(Run.status == "running", Run.hostname == host))
        stale = [r for r in running if is_stale(r)]
        for r in stale:
            r.status = "interrupted"
        return len(stale)
