"""A database that no command can use is refused in one line, exit 2, before any work and
before SQLite opens anything, naming the file given (issue 54, classes 2, 4 and 7): a path
that is a FIFO, a device or a directory; a damaged file, also an import's source; an
in-memory URL, which would hold nothing to read and keep nothing a command stores."""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import text

from benchdb.db.engine import damage_found, open_database
from benchdb.errors import UserError
from benchmarks.bad_inputs import _damage_deep
from tests.clihelpers import assert_user_error, benchdb

COLLECT = ["collect", "-k", "stream.triad", "--sizes", "64", "--quick"]
COMMANDS = [
    ["runs", "list"],
    ["db", "current"],
    ["db", "upgrade"],
    ["machine", "register"],
    ["predict", "-k", "stream.triad", "-s", "4096"],
    COLLECT,
]


def _env(tmp_path: Path) -> dict[str, str]:
    """The default database in a folder of the test's own: a message naming it is wrong."""
    return {"XDG_DATA_HOME": str(tmp_path / "data"), "BENCHDB_URL": ""}


def _listing(folder: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "other"
        for p in folder.iterdir()
    }


# ------------------------------------------------------------ A: the path's kind

KINDS: dict[str, tuple[Callable[[Path], None], str]] = {
    "fifo": (os.mkfifo, "is a FIFO (named pipe), not a file"),
    "directory": (Path.mkdir, "is a folder, not a file; name a file in it"),
}


@pytest.mark.parametrize(
    ("kind", "command"),
    [("fifo", c) for c in [*COMMANDS, ["import", "{good}"]]]
    + [("directory", c) for c in [["runs", "list"], ["db", "upgrade"], COLLECT]],
    ids=lambda v: " ".join(v) if isinstance(v, list) else v,
)
def test_a_database_path_that_is_no_file_is_refused_before_sqlite_opens_it(
    tmp_path: Path, kind: str, command: list[str]
) -> None:
    """A FIFO hung every command (SQLite waits for a writer to open it)."""
    make, needle = KINDS[kind]
    folder = tmp_path / "f"
    folder.mkdir()
    target = folder / "bench.sqlite"
    make(target)
    before = _listing(folder)
    args = [a.replace("{good}", str(tmp_path / "none.json")) for a in command]
    proc = benchdb(*args, "--db", f"sqlite:///{target}", env=_env(tmp_path), timeout=60)
    assert_user_error(proc, f"database {target} {needle}")
    assert _listing(folder) == before
    assert not (tmp_path / "data").exists()


@pytest.mark.skipif(not Path("/dev/null").is_char_device(), reason="no /dev/null here")
@pytest.mark.parametrize("command", [["machine", "register"], ["runs", "list"]], ids=" ".join)
def test_a_device_is_refused_and_gets_no_journal_beside_it(
    tmp_path: Path, command: list[str]
) -> None:
    """``machine register`` printed a traceback and created /dev/null-journal."""
    journal = Path("/dev/null-journal")
    had_journal = journal.exists()
    proc = benchdb(*command, "--db", "sqlite:////dev/null", env=_env(tmp_path), timeout=60)
    assert_user_error(proc, "database /dev/null is a device, not a file")
    assert journal.exists() == had_journal


def test_an_import_source_that_is_a_fifo_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "other.sqlite"
    os.mkfifo(source)
    target = tmp_path / "new.sqlite"
    proc = benchdb("import", f"sqlite:///{source}", "--db", f"sqlite:///{target}", timeout=60)
    assert_user_error(proc, f"database {source} is a FIFO (named pipe)")
    assert not target.exists()


# ------------------------------------------------------------ B: the file named


@pytest.fixture(scope="module")
def populated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A benchdb database, every page in the file (no ``-wal`` beside it)."""
    target = tmp_path_factory.mktemp("populated") / "bench.sqlite"
    proc = benchdb("machine", "register", "--db", f"sqlite:///{target}")
    assert proc.returncode == 0, proc.stderr
    with sqlite3.connect(target) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return target


@pytest.fixture
def deep(tmp_path: Path, populated: Path) -> Path:
    """A copy of ``populated`` whose header reads and whose run and measurement tables'
    pages are overwritten (benchmarks/bad_inputs.py)."""
    folder = tmp_path / "f"
    folder.mkdir()
    _damage_deep(populated, folder / "corrupt.sqlite")
    return folder / "corrupt.sqlite"


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_damaged_database_is_named_as_given_before_any_work(
    tmp_path: Path, deep: Path, command: list[str]
) -> None:
    """The message named the default database; ``db current`` and ``db upgrade`` said
    "at revision ... (head)", exit 0; ``collect`` said it after checking its kernels, in
    two lines."""
    before = _listing(deep.parent)
    proc = benchdb(*command, "--db", f"sqlite:///{deep}", env=_env(tmp_path))
    assert_user_error(proc, f"database {deep} is damaged")
    assert "checked before the sweep" not in proc.stderr
    assert _listing(deep.parent) == before
    assert not (tmp_path / "data").exists()


def test_a_damaged_import_source_is_named_not_the_database(
    tmp_path: Path, deep: Path, populated: Path
) -> None:
    target = tmp_path / "new.sqlite"
    proc = benchdb("import", str(deep), "--db", f"sqlite:///{target}", env=_env(tmp_path))
    assert_user_error(proc, f"database {deep} is damaged")
    assert not target.exists()


def test_damage_a_query_finds_later_names_the_database_it_is_in(tmp_path: Path) -> None:
    """A page the opening check does not read (past a table's first) is found by the
    query that reaches it, and named there: the command may have opened two."""
    target = tmp_path / "bench.sqlite"
    open_database(f"sqlite:///{target}").close()
    with sqlite3.connect(target) as conn:
        conn.execute("PRAGMA journal_mode = DELETE")
        conn.execute("CREATE TABLE extra (x BLOB)")
        conn.executemany("INSERT INTO extra VALUES (?)", [(bytes(1000),)] * 200)
        page = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    data = bytearray(target.read_bytes())
    data[-page:] = b"\xa5" * page  # a leaf of `extra`, not its first
    target.write_bytes(bytes(data))
    db = open_database(f"sqlite:///{target}", create=False)
    try:
        damaged = f"database sqlite:///{target} is damaged"
        with pytest.raises(UserError, match=damaged), db.engine.connect() as conn:
            conn.execute(text("SELECT count(*) FROM extra")).scalar()
        raw = sqlite3.DatabaseError("database disk image is malformed")  # past the engine
        assert f"sqlite:///{target}" in str(damage_found(raw))  # among those open here
    finally:
        db.close()


# ------------------------------------------------------------ C: in-memory databases

IN_MEMORY = ["sqlite://", "sqlite:///:memory:", "sqlite:///file::memory:?uri=true"]


@pytest.mark.parametrize(
    ("url", "command"),
    [(IN_MEMORY[0], c) for c in COMMANDS] + [(url, COLLECT) for url in IN_MEMORY[1:]],
    ids=lambda v: " ".join(v) if isinstance(v, list) else v,
)
def test_an_in_memory_database_is_refused_before_any_work(
    tmp_path: Path, url: str, command: list[str]
) -> None:
    """``collect --db sqlite://`` measured for minutes, said "run 1 complete" and kept
    nothing."""
    proc = benchdb(*command, "--db", url, env=_env(tmp_path))
    assert_user_error(proc, f"database {url} is in memory")
    assert "checked before the sweep" not in proc.stderr
    assert not (tmp_path / "data").exists()


def test_an_in_memory_url_in_the_environment_or_as_an_import_source_is_refused(
    tmp_path: Path, populated: Path
) -> None:
    proc = benchdb(*COLLECT, env={**_env(tmp_path), "BENCHDB_URL": "sqlite://"})
    assert_user_error(proc, "database sqlite:// is in memory")
    target = tmp_path / "new.sqlite"
    proc = benchdb("import", "sqlite://", "--db", f"sqlite:///{target}", env=_env(tmp_path))
    assert_user_error(proc, "database sqlite:// is in memory")
    assert not target.exists()


def test_the_python_api_refuses_an_in_memory_database() -> None:
    with pytest.raises(UserError, match="is in memory"):
        open_database("sqlite://")
