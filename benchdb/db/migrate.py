"""Alembic, driven from code so it works from a wheel as well as a checkout.

The migration scripts ship inside the package as ``benchdb.migrations``; the
alembic configuration is built here rather than read from an ``alembic.ini``
that a wheel would not carry.
"""

from __future__ import annotations

from importlib.resources import files

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine

from ..errors import UserError
from .urls import redact


def alembic_config(engine: Engine | None = None) -> Config:
    """A Config pointing at the packaged migrations, bound to ``engine``."""
    cfg = Config()
    cfg.set_main_option("script_location", str(files("benchdb.migrations")))
    if engine is not None:
        cfg.attributes["engine"] = engine
    return cfg


def head_revision() -> str:
    return ScriptDirectory.from_config(alembic_config()).get_current_head() or ""


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def ensure_schema(engine: Engine, url: str, *, upgrade: bool) -> None:
    """Refuse a database from newer code; upgrade (or refuse) an older one."""
    current = current_revision(engine)
    script = ScriptDirectory.from_config(alembic_config())
    head = script.get_current_head()
    if current == head:
        return
    if current is not None:
        try:
            script.get_revision(current)
        except Exception as exc:  # alembic raises several types for unknown ids
            raise UserError(
                f"database {redact(url)} is at schema revision {current}, newer than this "
                f"benchdb knows (head {head}); upgrade benchdb (pip install -U benchdb) "
                "or use another database"
            ) from exc
    if not upgrade:
        raise UserError(
            f"database {redact(url)} is at schema revision {current or 'none'}, "
            f"behind this benchdb ({head}); run `benchdb db upgrade`"
        )
    upgrade_to_head(engine)


def upgrade_to_head(engine: Engine) -> None:
    command.upgrade(alembic_config(engine), "head")
