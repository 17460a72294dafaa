"""A file given as the database that is no benchdb database (not SQLite, damaged, empty,
another application's) is one line and exit 2 on every command, and is left exactly as it
was: no journal mode switched, no page written, no ``-wal`` or ``-shm`` beside it.  A
database this process may not write is refused by the commands that store, and read by
the others."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from benchdb.db.engine import open_database
from tests.clihelpers import assert_user_error, benchdb

READERS = [["runs", "list"], ["kernels"], ["db", "current"]]
WRITERS = [["machine", "register"], ["baseline", "set", "1"]]


def _other_application(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (body TEXT)")
    conn.execute("INSERT INTO notes VALUES ('mine')")
    conn.commit()
    conn.close()


def _damaged(path: Path) -> None:
    _other_application(path)
    data = bytearray(path.read_bytes())
    data[16:100] = b"\xff" * 84  # the header's page size and counters, after the magic
    path.write_bytes(bytes(data))


FILES = {
    "text": (lambda p: p.write_text("my notes\n"), "is not an SQLite database"),
    "damaged": (_damaged, "is damaged"),
    "other application": (_other_application, "of another application (tables notes)"),
}


def _listing(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir()}


@pytest.mark.parametrize("kind", FILES)
@pytest.mark.parametrize("command", READERS + WRITERS, ids=" ".join)
def test_a_file_that_is_no_benchdb_database_is_refused_and_left_alone(
    tmp_path: Path, kind: str, command: list[str]
) -> None:
    make, needle = FILES[kind]
    target = tmp_path / "data.sqlite"
    make(target)
    before = _listing(tmp_path)
    assert_user_error(benchdb(*command, "--db", f"sqlite:///{target}"), needle)
    assert _listing(tmp_path) == before
    if kind == "other application":
        with sqlite3.connect(target) as conn:
            assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"


@pytest.mark.parametrize("command", READERS, ids=" ".join)
def test_an_empty_file_is_no_database_to_read(tmp_path: Path, command: list[str]) -> None:
    target = tmp_path / "empty.sqlite"
    target.touch()
    assert_user_error(benchdb(*command, "--db", f"sqlite:///{target}"), "holds no benchdb data")
    assert target.stat().st_size == 0
    assert [p.name for p in tmp_path.iterdir()] == ["empty.sqlite"]


def test_an_empty_file_is_a_new_database_to_write(tmp_path: Path) -> None:
    target = tmp_path / "empty.sqlite"
    target.touch()
    assert benchdb("machine", "register", "--db", f"sqlite:///{target}").returncode == 0
    assert benchdb("runs", "list", "--db", f"sqlite:///{target}").returncode == 0


def test_a_page_damaged_deep_in_the_file_is_one_line(tmp_path: Path) -> None:
    """The schema page reads fine; SQLite finds the damage only when a query reaches it."""
    target = tmp_path / "bench.sqlite"
    open_database(f"sqlite:///{target}").close()
    with sqlite3.connect(target) as conn:
        conn.execute("PRAGMA journal_mode = DELETE")
        root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'run'").fetchone()[0]
        page = conn.execute("PRAGMA page_size").fetchone()[0]
    data = bytearray(target.read_bytes())
    data[(root - 1) * page : root * page] = b"\xa5" * page
    target.write_bytes(bytes(data))
    assert_user_error(benchdb("runs", "list", "--db", f"sqlite:///{target}"), "is damaged")


@pytest.fixture
def read_only_db(tmp_path: Path) -> Path:
    """A benchdb database in a folder, both read-only (a copy on read-only media)."""
    folder = tmp_path / "ro"
    folder.mkdir()
    target = folder / "bench.sqlite"
    assert benchdb("machine", "register", "--db", f"sqlite:///{target}").returncode == 0
    target.chmod(0o444)
    folder.chmod(0o555)
    yield target
    folder.chmod(0o755)


@pytest.mark.parametrize(
    "command",
    [
        ["machine", "register"],
        ["baseline", "set", "1"],
        ["collect", "-k", "stream.triad", "--sizes", "64", "--quick"],
        ["db", "upgrade"],
    ],
    ids=" ".join,
)
def test_a_read_only_database_is_refused_by_a_command_that_stores(
    read_only_db: Path, command: list[str]
) -> None:
    before = _listing(read_only_db.parent)
    proc = benchdb(*command, "--db", f"sqlite:///{read_only_db}", as_user=True)
    assert_user_error(proc, "is read-only here")
    assert "chmod u+w" in proc.stderr
    assert _listing(read_only_db.parent) == before


def test_a_read_only_database_is_read(read_only_db: Path) -> None:
    before = _listing(read_only_db.parent)
    proc = benchdb("runs", "list", "--db", f"sqlite:///{read_only_db}", as_user=True)
    assert proc.returncode == 0, proc.stderr
    assert _listing(read_only_db.parent) == before
