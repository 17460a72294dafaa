"""The ORM metadata and the alembic revisions describe the same schema."""

from __future__ import annotations

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import text

from benchdb.db.engine import make_engine, open_database
from benchdb.db.migrate import current_revision, head_revision
from benchdb.db.models import SCHEMA_HEAD, Base
from benchdb.errors import UserError


def test_autogenerate_finds_no_difference(db) -> None:
    with db.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    assert diff == []


def test_schema_head_constant_matches_alembic() -> None:
    """A new revision must bump ``SCHEMA_HEAD`` (the fast open path trusts it)."""
    assert head_revision() == SCHEMA_HEAD


def test_open_creates_schema_at_head(db_url: str) -> None:
    database = open_database(db_url)
    assert current_revision(database.engine) == head_revision()
    database.close()


def test_refuses_database_newer_than_code(db_url: str) -> None:
    database = open_database(db_url)
    with database.engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = 'ffffffffffff'"))
    database.close()
    with pytest.raises(UserError, match="newer than this benchdb"):
        open_database(db_url)
    # refused, not rewritten
    eng = make_engine(db_url)
    assert current_revision(eng) == "ffffffffffff"
    eng.dispose()


def test_refuses_old_database_when_not_upgrading(db_url: str) -> None:
    eng = make_engine(db_url)
    with pytest.raises(UserError, match="benchdb db upgrade"):
        open_database(db_url, upgrade=False)
    assert current_revision(eng) is None
    eng.dispose()
