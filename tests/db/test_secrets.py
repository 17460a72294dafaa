"""A password given in the database URL never leaves the user's hands (issue 31).

Whether it comes in ``--db`` or ``BENCHDB_URL``, a password in the URL is never stored (no
row of any table holds it, so no export can pass it on), never printed, never written into
a batch script and never put in a child process's arguments (every user of a node reads
those with ``ps``): children get it as ``PGPASSWORD`` in their environment.  The end-to-end
tests run the real CLI against the real PostgreSQL with a password of their own (the local
server trusts any), and look for it everywhere.
"""

from __future__ import annotations

import ast
import json
import os
import shlex
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from benchdb.collectors.mpi import launcher
from sqlalchemy import MetaData, create_engine, select
from sqlalchemy.orm import Session

from benchdb.db.engine import open_database
from benchdb.db.models import Run
from benchdb.db.transfer import check_bundle, import_bundle, read_bundle
from benchdb.db.urls import (
    PASSWORD_VAR,
    URL_VAR,
    child_environment,
    redact,
    redact_argv,
    redact_command,
    split_password,
)
from benchdb.errors import UserError
from tests.clihelpers import run_benchdb
from tests.db.revisions import add_this_run, engine_at
from tests.needs import missing

ROOT = Path(__file__).parents[2]
SOURCE = [ROOT / d for d in ("benchdb", "collectors", "kernels", "migrations")]
FIXTURES = Path(__file__).parent / "fixtures"
PW = "pw-S3cr3t/@x"  # a "/" and an "@" that SQLAlchemy takes unescaped in the user part


# -- the one redaction ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "stored"),
    [
        (["benchdb", "--db", f"postgresql+psycopg://me:{PW}@h:5432/db", "collect"],
         "benchdb --db postgresql+psycopg://me:***@h:5432/db collect"),
        (["benchdb", f"--db=postgresql://me:{PW}@h/db", "runs", "list"],
         "benchdb --db=postgresql://me:***@h/db runs list"),
        (["env", f"BENCHDB_URL=postgresql://me:{PW}@h/db", "benchdb"],
         "env BENCHDB_URL=postgresql://me:***@h/db benchdb"),
        (["x", "postgresql://me@h/db?sslmode=require&password=pw-q1&application_name=a"],
         "x postgresql://me@h/db?sslmode=require&password=***&application_name=a"),
        (["benchdb", "--db", "postgresql://me@h/db?options=-csearch_path%3Ds", "collect"],
         "benchdb --db postgresql://me@h/db?options=-csearch_path%3Ds collect"),
        (["benchdb", "--db", "sqlite:////tmp/a:b@c.sqlite"],
         "benchdb --db sqlite:////tmp/a:b@c.sqlite"),
    ],
)  # fmt: skip
def test_redact_argv_masks_the_password_of_any_url_in_any_argument(
    argv: list[str], stored: str
) -> None:
    assert redact_argv(argv) == stored
    assert redact_command(" ".join(argv)) == stored  # a command stored as text: the same
    assert redact_command(stored) == stored


def test_redact_keeps_the_url_as_written_but_its_password() -> None:
    assert redact(f"postgresql+psycopg://me:{PW}@h/db") == "postgresql+psycopg://me:***@h/db"
    assert redact("postgresql+psycopg://me@h/db") == "postgresql+psycopg://me@h/db"
    assert redact(f"me:{PW}@h/db") == "<unparseable URL>"


def test_split_password_and_the_child_environment() -> None:
    url = "postgresql+psycopg://me:pw%40x%2F@h:5432/db?options=-csearch_path%3Ds"
    bare = "postgresql+psycopg://me@h:5432/db?options=-csearch_path%3Ds"
    assert split_password(url) == (bare, "pw@x/")  # as libpq takes it: decoded
    assert split_password("postgresql://me@h/db?password=q&sslmode=require") == (
        "postgresql://me@h/db?sslmode=require",
        "q",
    )
    assert split_password(bare) == (bare, None)
    environ = {"HOME": "/home/me", URL_VAR: "postgresql://me:pw%40y@other/db"}
    child_url, env = child_environment(url, environ)
    assert child_url == bare
    assert env == {"HOME": "/home/me", URL_VAR: "postgresql://me@other/db", PASSWORD_VAR: "pw@x/"}
    assert child_environment(bare, {PASSWORD_VAR: "mine"}) == (bare, {PASSWORD_VAR: "mine"})


# -- one constructor of run rows --------------------------------------------------------------


def _run_constructions(tree: ast.AST) -> list[int]:
    """Lines that call ``Run(...)`` or ``<module>.Run(...)``."""
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (
            (isinstance(node.func, ast.Name) and node.func.id == "Run")
            or (isinstance(node.func, ast.Attribute) and node.func.attr == "Run")
        )
    ]


def test_only_new_run_row_constructs_a_run() -> None:
    """Every run row is made by ``benchdb.db.runs.new_run_row``, which masks its command: a
    second constructor would be a second way to store a password."""
    offenders = []
    for path in sorted(p for folder in SOURCE for p in folder.rglob("*.py")):
        lines = _run_constructions(ast.parse(path.read_text(), str(path)))
        if path != ROOT / "benchdb" / "db" / "runs.py":
            offenders += [f"{path.relative_to(ROOT)}:{line}" for line in lines]
        else:
            assert len(lines) == 1, f"benchdb/db/runs.py constructs Run at lines {lines}"
    assert not offenders, f"make runs with benchdb.db.runs.new_run_row: {', '.join(offenders)}"


def test_the_check_sees_a_run_constructed() -> None:
    tree = ast.parse("from x import models, Run\nr = Run(id=1)\ns = models.Run()\nt = Runner()\n")
    assert _run_constructions(tree) == [2, 3]


# -- rows written before, and rows imported ---------------------------------------------------


def test_migration_0008_masks_the_commands_already_stored(db_url: str) -> None:
    typed = f"benchdb --db=postgresql://me:{PW}@h/db collect --quick"
    plain = "benchdb --db sqlite:////tmp/b.sqlite collect"
    engine = engine_at(db_url, "0007")
    with Session(engine) as s, s.begin():
        add_this_run(s, status="complete", command=typed)
        add_this_run(s, status="complete", command=plain)
    engine.dispose()
    db = open_database(db_url)  # upgrades to the head through 0008
    with db.session() as s:
        commands = s.scalars(select(Run.command).order_by(Run.id)).all()
    db.close()
    assert commands == ["benchdb --db=postgresql://me:***@h/db collect --quick", plain]


def test_an_imported_command_is_masked(sqlite_url: str, tmp_path: Path) -> None:
    """An export written by an older benchdb may hold a password; importing stores none."""
    document = json.loads((FIXTURES / "schema_0005_export.json").read_text())
    key = next(iter(document["runs"]))
    document["runs"][key]["command"] = f"benchdb --db postgresql://me:{PW}@h/db collect"
    path = tmp_path / "old.json"
    path.write_text(json.dumps(document))
    db = open_database(sqlite_url)
    import_bundle(db, check_bundle(read_bundle(path)))
    with db.session() as s:
        commands = s.scalars(select(Run.command)).all()
    db.close()
    assert "benchdb --db postgresql://me:***@h/db collect" in commands
    assert not any(PW in c for c in commands)


# -- the real CLI, against the real PostgreSQL ------------------------------------------------


class Cli:
    """The real ``benchdb`` in a subprocess, given the database one way (``how``), every
    output kept for the final search."""

    def __init__(self, how: str, url: str, cwd: Path, path_prefix: Path | None = None) -> None:
        self.how, self.url, self.cwd = how, url, cwd
        self.env = {k: v for k, v in os.environ.items() if k not in (URL_VAR, PASSWORD_VAR)}
        self.env["COLUMNS"] = "200"
        if path_prefix is not None:
            self.env["PATH"] = f"{path_prefix}{os.pathsep}{self.env['PATH']}"
        if how == URL_VAR:
            self.env[URL_VAR] = url
        self.outputs: list[str] = []

    def __call__(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``benchdb ARGS``, the database given as ``--db URL`` after the subcommand, or in
        ``BENCHDB_URL``; it must succeed."""
        db = ["--db", self.url] if self.how == "--db" else []
        proc = run_benchdb([*args, *db], env=self.env, cwd=self.cwd)
        self.outputs += [proc.stdout, proc.stderr]
        assert proc.returncode == 0, proc.stderr
        return proc


def _every_row(url: str) -> Iterator[str]:
    """Every row of every table of the database, as text."""
    engine = create_engine(url)
    meta = MetaData()
    meta.reflect(engine)
    with engine.connect() as conn:
        for table in meta.sorted_tables:
            for row in conn.execute(table.select()):
                yield f"{table.name}: {tuple(row)!r}"
    engine.dispose()


def _stand_in(folder: Path, name: str, body: str) -> Path:
    """An executable shell script ``folder/name``."""
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/bash\nset -eu\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _assert_nowhere(secret: str, url: str, texts: list[str]) -> None:
    leaks = [t for t in [*texts, *_every_row(url)] if secret in t]
    assert not leaks, leaks[:3]


HOW = ["--db", URL_VAR]


@pytest.mark.parametrize("how", HOW)
def test_the_password_is_in_no_output_file_script_or_row(
    how: str, secret: str, secret_url: str, tmp_path: Path
) -> None:
    """collect, runs list, measurements show, export, the Slurm scripts (dry runs, and one
    submitted to a stand-in ``sbatch`` that records what it gets, on the 2-node partition
    a stand-in ``sinfo`` lists: the checks before submitting ask for it)."""
    record = tmp_path / "sbatch-got"
    stand_ins = tmp_path / "bin"
    _stand_in(stand_ins, "sbatch", f"cat >{record}.script\nenv >{record}.env\necho 4242")
    _stand_in(stand_ins, "sinfo", "printf 'debug* n1 2 16000\\ndebug* n2 2 16000\\n'")  # 2 nodes
    cli = Cli(how, secret_url, tmp_path, stand_ins)
    cli("collect", "--kernels", "stream.triad", "--footprints", "16KiB", "--quick", "-q")
    cli("runs", "list")
    cli("runs", "list", "--json")
    cli("measurements", "show", "--kernel", "stream.triad")
    cli("export", "--out", str(tmp_path / "all.json"))
    cli("slurm", "collect", "--nodes", "2", "--quick", "--dry-run")
    note = cli("slurm", "collect", "--nodes", "2", "--quick", "--dry-run", "--json").stderr
    assert f"as {PASSWORD_VAR} in its environment" in note
    script = json.loads(cli("slurm", "comm", "--nodes", "2", "--dry-run", "--json").stdout)
    bare = split_password(secret_url)[0]
    assert f"--db {shlex.quote(bare)} " in script["script"]  # the nodes are still told the database
    cli("slurm", "collect", "--nodes", "2", "--quick")
    got = Path(f"{record}.env").read_text().splitlines()
    assert f"{PASSWORD_VAR}={secret}" in got  # the job inherits sbatch's environment
    assert how != URL_VAR or f"{URL_VAR}={bare}" in got
    files = [p.read_text() for p in [tmp_path / "all.json", Path(f"{record}.script")]]
    _assert_nowhere(secret, secret_url, [*cli.outputs, *files])


@pytest.mark.mpi
@pytest.mark.parametrize("how", HOW)
def test_mpi_ranks_get_the_password_in_their_environment_only(
    how: str, secret: str, secret_url: str, tmp_path: Path
) -> None:
    """``comm collect`` starts mpiexec (here through a stand-in that records its arguments
    and environment, then runs the real one) with the password in PGPASSWORD, never in an
    argument; rank 0 reaches the database with it and stores its run."""
    try:
        mpiexec = launcher.find_mpiexec()
    except UserError as exc:
        missing(f"no mpiexec: {exc}", "BENCHDB_REQUIRE_MPI")
    record = tmp_path / "mpiexec-got"
    wrapper = _stand_in(
        tmp_path / "bin",
        "mpiexec",
        f'printf "%s\\n" "$@" >{record}.argv\nprintf "%s" "${{{PASSWORD_VAR}-}}" >{record}.pw\n'
        f'exec {mpiexec} "$@"',
    )
    cli = Cli(how, secret_url, tmp_path)
    cli("comm", "collect", "--ranks", "2", "--benchmarks", "pingpong", "--sizes", "8,64",
        "--samples", "3", "--min-sample-time", "0.0005", "--mpiexec", str(wrapper))  # fmt: skip
    assert Path(f"{record}.pw").read_text() == secret
    argv = Path(f"{record}.argv").read_text()
    assert split_password(secret_url)[0] in argv.splitlines()
    runs = [row for row in _every_row(secret_url) if row.startswith("run:")]
    assert len(runs) == 1 and "'comm'" in runs[0]
    _assert_nowhere(secret, secret_url, [*cli.outputs, argv])
