"""Databases at an older schema revision, for testing the migrations that follow it."""

from __future__ import annotations

from typing import Any

from alembic import command
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from benchdb.db.engine import make_engine
from benchdb.db.migrate import alembic_config
from benchdb.db.models import Run
from benchdb.db.repo import register_environment, register_machine
from benchdb.environment import detect_environment
from benchdb.machine import detect_machine


def engine_at(db_url: str, revision: str) -> Engine:
    """An engine on a new database migrated up to ``revision`` only."""
    engine = make_engine(db_url)
    command.upgrade(alembic_config(engine), revision)
    return engine


def add_this_run(session: Session, **fields: Any) -> Run:
    """A run of this machine and environment, flushed (its id set); tables it touches must
    be the same at the old revision as at the head."""
    run = Run(
        machine_id=register_machine(session, detect_machine()).id,
        environment_id=register_environment(session, detect_environment()).id,
        **fields,
    )
    session.add(run)
    session.flush()
    return run
