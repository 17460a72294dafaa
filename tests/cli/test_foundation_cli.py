"""``benchdb machine`` and ``benchdb db``, and their bad-input paths (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import func, select, text

from benchdb.db.engine import make_engine, open_database
from benchdb.db.models import Machine
from tests.clihelpers import assert_user_error, benchdb


def test_machine_show_json_reports_caches() -> None:
    proc = benchdb("machine", "show", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    names = {c["name"] for c in data["caches"]}
    assert {"L1d", "L2"} <= names
    assert len(data["fingerprint"]) == 64


def test_machine_register_is_idempotent(db_url: str) -> None:
    for _ in range(2):
        proc = benchdb("machine", "register", "--db", db_url, "--json")
        assert proc.returncode == 0, proc.stderr
    db = open_database(db_url)
    with db.session() as s:
        assert s.scalar(select(func.count()).select_from(Machine)) == 1


def test_root_db_option_and_env_var(tmp_path: Path) -> None:
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    assert benchdb("--db", f"sqlite:///{a}", "machine", "register").returncode == 0
    assert benchdb("machine", "register", env={"BENCHDB_URL": f"sqlite:///{b}"}).returncode == 0
    assert a.exists() and b.exists()


def test_db_upgrade_and_current(db_url: str) -> None:
    assert benchdb("db", "upgrade", "--db", db_url).returncode == 0
    proc = benchdb("db", "current", "--db", db_url, "--json")
    assert json.loads(proc.stdout)["up_to_date"] is True


def test_unreachable_postgres_is_exit_2_and_hides_password() -> None:
    proc = benchdb(
        "machine", "register", "--db", "postgresql+psycopg://bob:s3cret@127.0.0.1:1/nodb"
    )
    assert_user_error(proc, "cannot reach database")
    assert "s3cret" not in proc.stderr + proc.stdout


def test_unwritable_sqlite_path_is_exit_2(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    proc = benchdb("machine", "register", "--db", f"sqlite:///{blocker}/sub/x.sqlite")
    assert_user_error(proc, "--db sqlite:///PATH")


def test_garbage_url_is_exit_2() -> None:
    assert_user_error(benchdb("machine", "register", "--db", "not a url"), "neither a URL")


def test_a_path_without_scheme_names_an_sqlite_file(tmp_path: Path) -> None:
    target = tmp_path / "plain.sqlite"
    assert benchdb("machine", "register", "--db", str(target)).returncode == 0
    listed = benchdb("runs", "list", "--db", str(target), "--json")
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout) == []
    missing = tmp_path / "missing.sqlite"
    assert_user_error(benchdb("runs", "list", "--db", str(missing)), "no database at")
    assert not missing.exists()


@pytest.mark.parametrize("command", [["runs", "list"], ["machine", "register"]])
def test_a_file_that_is_no_database_is_refused_and_left_alone(
    tmp_path: Path, command: list[str]
) -> None:
    target = tmp_path / "notes.sqlite"
    target.write_bytes(b"these are my notes, not a database\n" * 10)
    before = target.read_bytes()
    assert_user_error(benchdb(*command, "--db", f"sqlite:///{target}"), "is not an SQLite database")
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.sqlite"]  # no -wal, -shm


def test_database_newer_than_code_is_exit_2_and_unchanged(db_url: str) -> None:
    open_database(db_url).close()
    eng = make_engine(db_url)
    with eng.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = 'ffffffffffff'"))
    proc = benchdb("machine", "register", "--db", db_url)
    assert_user_error(proc, "newer than this benchdb")
    with eng.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM machine")).scalar() == 0
        assert (
            conn.execute(text("SELECT version_num FROM alembic_version")).scalar() == "ffffffffffff"
        )
    eng.dispose()


@pytest.mark.parametrize("args", [["machine", "show", "--bogus"], ["db", "nope"]])
def test_invalid_options_exit_2(args: list[str]) -> None:
    assert benchdb(*args).returncode == 2


def test_help_teaches() -> None:
    proc = benchdb("--help")
    assert proc.returncode == 0
    assert "collect" in proc.stdout and "machine" in proc.stdout


def test_piped_tables_keep_one_line_per_row(tmp_path: Path) -> None:
    """On a pipe (CI logs, grep) a table is printed at its natural width however
    narrow the terminal setting: no value folded mid-token, one line per row."""
    url = f"sqlite:///{tmp_path / 'none.sqlite'}"
    names = [k["name"] for k in json.loads(benchdb("--db", url, "kernels", "--json").stdout)]
    proc = benchdb("--db", url, "kernels", env={"COLUMNS": "40"})
    assert proc.returncode == 0, proc.stderr
    body = [line for line in proc.stdout.splitlines() if line.startswith("│")]
    assert [line.split("│")[1].strip() for line in body] == names
    assert len({len(line) for line in body}) == 1 and len(body[0]) > 40
