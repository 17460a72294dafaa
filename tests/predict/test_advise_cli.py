"""``benchdb advise`` through the real console entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import func, select

from benchdb.db.engine import open_database
from benchdb.db.models import Measurement, Model, Run
from tests.clihelpers import assert_user_error

from .synth import add_run, cli, square_sizes, step_curve

DIP = (512, 512)
SIZES = sorted({*square_sizes(8, 1500, 16), (480, 480), DIP, (544, 544)})


@pytest.fixture(scope="module")
def url(tmp_path_factory) -> str:
    """A stencil2d5 curve with a dip planted at 512x512."""
    path = tmp_path_factory.mktemp("advise") / "bench.sqlite"
    u = f"sqlite:///{path}"
    db = open_database(u)
    add_run(db, "stencil2d5", SIZES, step_curve(), scale_at={DIP: 0.6})
    db.close()
    return u


def counts(url: str) -> tuple[int, int, int]:
    """(runs, measurements, models): what a command may have written."""
    db = open_database(url)
    with db.session() as s:
        out = tuple(
            s.scalar(select(func.count()).select_from(t)) for t in (Run, Measurement, Model)
        )
    db.close()
    return out  # type: ignore[return-value]


def test_the_table_names_the_dip_and_lists_paddings(url: str, capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    proc = cli(capsys, "advise", "--db", url, "-k", "stencil2d5", "-s", "512x512", "--top", "3")
    assert proc.returncode == 0, proc.stderr
    first = proc.stdout.splitlines()[0]
    assert "512x512 sits near the measured dip at 512x512" in first
    table = [ln for ln in proc.stdout.splitlines() if "x5" in ln and "│" in ln]
    shapes = [ln.split("│")[1].strip() for ln in table]
    assert shapes == ["512x512", "512x513", "513x512", "512x514"]
    assert "1.00x" in table[0] and "dip" in table[0]


def test_json_ranks_faster_candidates(url: str, capsys) -> None:
    proc = cli(
        capsys, "advise", "--db", url, "-k", "stencil2d5", "-s", "512x512", "--pad", "2", "--json"
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["near_dip"] is True and out["dips"] == ["512x512"]
    assert out["considered"] == 8 and out["measured_run"] is None
    assert out["query"]["shape"] == "512x512" and "dip" in out["query"]["flags"]
    cands = out["candidates"]
    assert len(cands) == 5 and all(c["ratio"] < 1 and c["shape"] != "512x512" for c in cands)
    assert [sum(c["padding"]) for c in cands] == sorted(sum(c["padding"]) for c in cands)
    assert out["lookup"]["kernel"] == "stencil2d5"


def test_no_dip_near_the_shape_says_so_and_measure_measures_nothing(url: str, capsys) -> None:
    before = counts(url)
    proc = cli(capsys, "advise", "--db", url, "-k", "stencil2d5", "-s", "100x100", "--measure")
    assert proc.returncode == 0, proc.stderr
    assert "near no measured dip" in proc.stdout and "nothing measured" in proc.stdout
    assert counts(url)[:2] == before[:2]
    proc = cli(capsys, "advise", "--db", url, "-k", "stencil2d5", "-s", "100x100", "--json")
    out = json.loads(proc.stdout)
    assert out["near_dip"] is False and out["candidates"] == [] and out["dips"] == []


BAD = [
    (["-k", "bogus", "-s", "10x10"], "known kernels: shallow.cu"),
    (["-k", "stencil2d5", "-s", "ten"], "is not like 600x400"),
    (["-k", "stencil2d5", "-s", "10x10x10"], "this kernel takes 2"),
    (["-k", "stencil2d5", "-s", "512x512", "--pad", "0"], "--pad 0 must be between 1 and 64"),
    (["-k", "stencil2d5", "-s", "512x512", "--pad", "65"], "--pad 65 must be between 1 and 64"),
    (["-k", "stencil2d5", "-s", "512x512", "--top", "0"], "--top 0 must be at least 1"),
    (["-k", "stencil2d5", "-s", "512x512", "--method", "nope"], "use one of"),
    (["-k", "stencil2d5", "-s", "512x512", "--threads", "999", "--measure"], "threads numba"),
    (["-k", "stencil2d5"], "--shape"),
]


@pytest.mark.parametrize(("args", "needle"), BAD)
def test_bad_input_exit_2_and_nothing_written(url: str, args, needle: str, capsys) -> None:
    before = counts(url)
    assert_user_error(cli(capsys, "advise", "--db", url, *args), needle)
    assert counts(url) == before


# an unknown kernel may be a user's, defined in the database: its absence is the error
NO_DB = [(BAD[0][0], "no database at"), *BAD[1:]]


@pytest.mark.parametrize(("args", "needle"), NO_DB)
def test_bad_input_creates_no_database(tmp_path: Path, args, needle: str, capsys) -> None:
    path = tmp_path / "none.sqlite"
    assert_user_error(cli(capsys, "advise", "--db", f"sqlite:///{path}", *args), needle)
    assert not path.exists()


def test_no_measurements_is_one_line(url: str, capsys) -> None:
    before = counts(url)
    assert_user_error(
        cli(capsys, "advise", "--db", url, "-k", "jacobi2d", "-s", "64x64"),
        "benchdb collect --kernels jacobi2d",
    )
    assert counts(url) == before


def small_db(path: Path) -> str:
    """A dip planted at 48x48, where a stencil2d5 call takes microseconds."""
    u = f"sqlite:///{path}"
    db = open_database(u)
    sizes = [(16, 16), (24, 24), (32, 32), (48, 48), (64, 64), (96, 96), (128, 128)]
    add_run(db, "stencil2d5", sizes, step_curve(), scale_at={(48, 48): 0.6})
    db.close()
    return u


SMALL = ["-k", "stencil2d5", "-s", "48x48", "--pad", "1", "--top", "1", "--measure"]


def test_measure_times_the_shape_and_its_candidates_interleaved(tmp_path: Path, capsys) -> None:
    """The real stencil2d5 is timed at 48x48 and the listed candidate in one run tagged
    advise, and read back beside the predictions."""
    u = small_db(tmp_path / "small.sqlite")
    proc = cli(capsys, "advise", "--db", u, *SMALL, "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    run = out["measured_run"]
    query, (cand,) = out["query"], out["candidates"]
    assert query["measured_time_s"] > 0 and query["measured_ratio"] == 1.0
    assert cand["shape"] == "48x49" and cand["measured_time_s"] > 0
    assert cand["measured_ratio"] == pytest.approx(
        cand["measured_time_s"] / query["measured_time_s"]
    )
    db = open_database(u)
    with db.session() as s:
        stored = s.get(Run, run)
        assert stored.tags == ["advise"] and stored.status == "complete"
        assert stored.config.get("interleaved") is True and stored.config["passes"] == 3
        keys = set(s.scalars(select(Measurement.shape_key).where(Measurement.run_id == run)))
    db.close()
    assert keys == {"48x48", "48x49"}


def test_measure_prints_measured_columns(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    u = small_db(tmp_path / "small.sqlite")
    proc = cli(capsys, "advise", "--db", u, *SMALL)
    assert proc.returncode == 0, proc.stderr
    assert "measured vs S" in proc.stdout and "tagged advise" in proc.stdout
    row = next(ln for ln in proc.stdout.splitlines() if "│ 48x48 " in ln)
    measured, measured_vs = (c.strip() for c in row.split("│")[-3:-1])
    assert measured.endswith("s") and measured != "-" and measured_vs == "1.00x"
