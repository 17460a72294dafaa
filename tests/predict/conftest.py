"""Fixtures of the prediction tests: an SQLite database the synthetic runs go into."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from benchdb.db.engine import Database, open_database


@pytest.fixture
def sdb(sqlite_url: str) -> Iterator[Database]:
    database = open_database(sqlite_url)
    yield database
    database.close()
