"""Integers beyond what a 64-bit column holds are refused in one line, exit 2, before
anything is read or written: typer gives Python's unbounded ints, SQLite and numpy do not
take them (benchdb/bounds.py)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from benchdb.db.engine import open_database
from tests.clihelpers import assert_user_error, benchdb
from tests.predict.synth import add_run, square_sizes, step_curve

BIG = "99999999999999999999999"
CASES = [
    (["runs", "list", "--limit", BIG], "more than a 64-bit integer holds"),
    (["compare", BIG, "latest"], "is not a run id"),
    (["baseline", "set", BIG], "is not a run id"),
    (["measurements", "show", "--run", BIG], "is not a run id"),
    (["predict", "-k", "shallow.cu", "-s", "100x100", "--iterations", BIG], "64-bit"),
    (["advise", "-k", "shallow.cu", "-s", f"2048x{BIG}"], "more than 2**53 points"),
    (["app", "predict", "--grid", f"{BIG}x256", "--decomp", "1x1"], "more than 2**53 points"),
    (["validate", "--fit-run", BIG], "64-bit"),
    (["collect", "--sizes", BIG, "-k", "stream.triad"], "more than 2**53 points"),
    (["scenario", "--grid", "256x256", "--ranks", BIG], "divides the grid 256x256"),
]


@pytest.fixture(scope="module")
def populated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("big") / "bench.sqlite"
    db = open_database(f"sqlite:///{path}")
    add_run(db, "shallow.cu", square_sizes(32, 2048, 10), step_curve())
    db.close()
    return path


@pytest.mark.parametrize(("args", "needle"), CASES, ids=lambda v: " ".join(v)[:30])
def test_an_integer_beyond_64_bits_is_refused_and_nothing_written(
    populated: Path, args: list[str], needle: str
) -> None:
    before = hashlib.sha256(populated.read_bytes()).hexdigest()
    assert_user_error(benchdb(*args, "--db", f"sqlite:///{populated}", timeout=60), needle)
    assert hashlib.sha256(populated.read_bytes()).hexdigest() == before
