"""Databases at an older schema revision, for testing the migrations that follow it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from alembic import command
from sqlalchemy import MetaData, Table, insert
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from benchdb.db.engine import make_engine
from benchdb.db.migrate import alembic_config
from benchdb.db.repo import register_environment, register_machine
from benchdb.db.runstate import utcnow
from benchdb.environment import detect_environment
from benchdb.machine import detect_machine


def engine_at(db_url: str, revision: str) -> Engine:
    """An engine on a new database migrated up to ``revision`` only."""
    engine = make_engine(db_url)
    command.upgrade(alembic_config(engine), revision)
    return engine


@dataclass(frozen=True)
class OldRun:
    """A run row written at an old revision: what the migration tests read back."""

    id: int
    node_class_id: int
    started_at: datetime


def add_this_run(session: Session, **fields: Any) -> OldRun:
    """A run of this machine and environment, flushed; the ``run`` table is read from the
    database (columns added after its revision are not there), the host and environment
    tables must be the same at the old revision as at the head."""
    machine = register_machine(session, detect_machine())
    run = Table("run", MetaData(), autoload_with=session.connection())
    values = {
        "machine_id": machine.id,
        "environment_id": register_environment(session, detect_environment()).id,
        "kind": "kernels",
        "command": "",
        "tags": [],
        "config": {},
        "hostname": "",
        "started_at": utcnow(),
        **fields,
    }
    run_id = session.execute(insert(run).values(**values).returning(run.c.id)).scalar_one()
    return OldRun(run_id, machine.node_class_id, values["started_at"])
