"""An --out that cannot be written (a folder where a file goes, a file where a folder goes,
a read-only folder, a file system that refuses) is one line, exit 2, and nothing is
created or stored, not even a cached fit (benchdb/outputs.py)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from benchdb.db.engine import open_database
from tests.clihelpers import assert_user_error, benchdb
from tests.predict.synth import add_run, square_sizes, step_curve


@pytest.fixture(scope="module")
def db_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('out') / 'bench.sqlite'}"
    db = open_database(url)
    add_run(db, "shallow.cu", square_sizes(32, 2048, 8), step_curve())
    db.close()
    return url


PLOT = ["plot", "curve", "-k", "shallow.cu", "--out"]
CASES = [
    (["export", "--out", "{dir}/d.csv"], "is a folder"),
    ([*PLOT, "{dir}/d.png"], "is a folder"),
    (["report", "--out", "{dir}/f"], "is a file"),
    (["export", "--out", "/proc/benchdb-test.csv"], "cannot write in /proc"),
    ([*PLOT, "/proc/benchdb-test.png"], "cannot write in /proc"),
    (["export", "--out", "{dir}/ro/x.json"], "cannot write in"),
    ([*PLOT, "{dir}/ro/x.svg"], "cannot write in"),
    (["report", "--out", "{dir}/ro/report"], "cannot write in"),
]


@pytest.mark.parametrize(("args", "needle"), CASES, ids=lambda v: " ".join(v)[:30])
def test_an_unwritable_out_is_one_line_and_creates_nothing(
    db_url: str, tmp_path: Path, args: list[str], needle: str
) -> None:
    for folder in ("d.csv", "d.png", "ro"):
        (tmp_path / folder).mkdir()
    (tmp_path / "f").write_text("a file")
    (tmp_path / "ro").chmod(0o555)
    before = sorted(tmp_path.rglob("*"))
    database = Path(db_url.removeprefix("sqlite:///"))
    stored = hashlib.sha256(database.read_bytes()).hexdigest()
    try:
        proc = benchdb(*(a.format(dir=tmp_path) for a in args), "--db", db_url, as_user=True)
        assert_user_error(proc, needle)
        assert sorted(tmp_path.rglob("*")) == before
        assert not Path("/proc/benchdb-test.csv").exists()
        assert hashlib.sha256(database.read_bytes()).hexdigest() == stored  # no fit cached
    finally:
        (tmp_path / "ro").chmod(0o755)
