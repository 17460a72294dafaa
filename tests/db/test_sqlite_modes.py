"""SQLite: readers beside a writer, read-only files, durable commits (benchdb/db/engine.py)."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from benchdb.db import engine as engine_module
from benchdb.db.engine import open_database
from benchdb.db.measurements import measurements_frame
from benchdb.db.models import Machine
from benchdb.errors import UserError
from tests.clihelpers import benchdb


def test_a_reader_does_not_wait_for_a_writer(sqlite_url: str, tmp_path: Path) -> None:
    open_database(sqlite_url, create=True).close()
    writer = sqlite3.connect(tmp_path / "bench.sqlite", isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # a collector committing, holding the write lock
    writer.execute("INSERT INTO baseline (node_class_id, run_id, set_at) VALUES (1, 1, '2026')")
    try:
        t0 = time.monotonic()
        proc = benchdb("runs", "list", "--db", sqlite_url, timeout=30)
        assert proc.returncode == 0, proc.stderr
        assert time.monotonic() - t0 < 25  # a reader that queued would wait the 60 s timeout
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def test_commits_are_durable(sqlite_url: str) -> None:
    db = open_database(sqlite_url)
    with db.engine.connect() as conn:
        assert conn.execute(text("PRAGMA synchronous")).scalar() == 2  # FULL
    db.close()


def test_a_read_only_file_is_read_and_never_written(
    sqlite_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    open_database(sqlite_url).close()
    real = engine_module.os.access
    target = tmp_path / "bench.sqlite"

    def read_only_here(path, mode):  # root may write anywhere: pretend the file is on RO media
        if mode == engine_module.os.W_OK and Path(path).resolve() in (target, tmp_path):
            return False
        return real(path, mode)

    monkeypatch.setattr(engine_module.os, "access", read_only_here)
    with pytest.raises(UserError, match="is read-only here"):
        open_database(sqlite_url)  # a command that stores is refused
    db = open_database(sqlite_url, create=False)  # one that reads opens it read-only
    assert db.read_only
    assert measurements_frame(db).empty
    with pytest.raises(OperationalError, match="readonly"), db.session() as s:
        s.add(Machine(fingerprint="x" * 64, node_class_id=1, hostname="h", cpu_model="c",
                      sockets=1, cores=1,
                      threads_per_core=1, numa_nodes=1, memory_bytes=1, caches=[],
                      isa_flags=[], os="linux", info={}))  # fmt: skip
    db.close()
