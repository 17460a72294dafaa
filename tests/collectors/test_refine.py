"""``benchdb refine``: real measurements where a curve misses by more than its noise.

The curve refine starts from is planted (a dip at one shape, stored in this
machine's environment, so refine takes it for an earlier collection); what
refine then measures is real: stencil2d5 at small shapes, checked against its
reference like any collection.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from benchdb.collectors.plan import Point, SweepPlan, select_benchmarks
from benchdb.collectors.refine import MODE, RefineSettings, refine
from benchdb.collectors.sweep import detect_context, run_sweep
from benchdb.kernels.registry import BUILTIN
from sqlalchemy import select

from benchdb.db.engine import Database, open_database
from benchdb.db.models import Measurement, Run
from tests.clihelpers import assert_user_error, benchdb
from tests.predict.synth import add_run, square_sizes, step_curve

KERNEL = "stencil2d5"
SIZES = square_sizes(16, 160, 10)
DIP = SIZES[5]
FAST = RefineSettings(sample_time=0.002, max_rounds=1, time_budget=120)


@pytest.fixture(scope="module")
def context():
    return detect_context()


def planted(url: str, context) -> Database:
    db = open_database(url)
    add_run(
        db,
        KERNEL,
        SIZES,
        step_curve(corner=1e5, width=6.0),
        repeat=0.01,
        scale_at={DIP: 0.6},
        environment=context.environment,
    )
    return db


def refine_runs(db: Database) -> list[Run]:
    with db.reading() as s:
        return [r for r in s.scalars(select(Run).order_by(Run.id)) if r.config.get("mode") == MODE]


def shapes_of(db: Database, run_id: int) -> set[str]:
    with db.reading() as s:
        rows = s.scalars(select(Measurement).where(Measurement.run_id == run_id))
        return {m.shape_key for m in rows if m.valid}


def test_a_round_measures_around_the_dip_and_stores_a_refine_run(sqlite_url, context) -> None:
    db = planted(sqlite_url, context)
    bench = select_benchmarks([KERNEL])[0]
    result = refine(db, [bench], FAST, context, BUILTIN)
    assert len(result.rounds) == 1 and result.stopped == "1 rounds done"
    added = result.rounds[0].added
    dip_key = f"{DIP[0]}x{DIP[1]}"
    around = [a for a in added if a.gap.shape == dip_key]
    assert around, [a.gap.reason for a in added]
    assert "is a dip" in around[0].gap.reason
    dip_fp = bench.footprint_bytes(DIP, "float64")
    lower = bench.footprint_bytes(SIZES[4], "float64")
    upper = bench.footprint_bytes(SIZES[6], "float64")
    sides = sorted(a.footprint_bytes for a in around)
    assert lower < sides[0] < dip_fp < sides[-1] < upper
    (run,) = refine_runs(db)
    assert run.status == "complete" and run.tags == [MODE]
    assert run.config["interleaved"] and run.config["passes"] == FAST.passes
    assert shapes_of(db, run.id) == {a.shape for a in added}
    db.close()


def test_an_interrupted_refine_run_is_continued_first(sqlite_url, context) -> None:
    db = planted(sqlite_url, context)
    bench = select_benchmarks([KERNEL])[0]
    shape = (40, 40)
    plan = SweepPlan(
        MODE,
        (Point(KERNEL, shape, "float64", 1, bench.footprint_bytes(shape, "float64")),),
        0.002,
        5,
        3,
        BUILTIN,
        interleaved=True,
    )
    cut = run_sweep(db, plan, time_budget=0, context=context)
    assert cut.status == "interrupted" and cut.measured == 0
    result = refine(db, [bench], FAST, context, BUILTIN)
    first = result.rounds[0]
    assert first.index == 0 and first.sweep.run_id == cut.run_id and first.sweep.resumed
    assert first.sweep.status == "complete" and shapes_of(db, cut.run_id) == {"40x40"}
    db.close()


def test_the_command_prints_each_round_and_the_gaps_left(sqlite_url, context) -> None:
    planted(sqlite_url, context).close()
    proc = benchdb(
        "refine", "-k", KERNEL, "--rounds", "1", "--sample-time", "0.002", "--db", sqlite_url
    )
    assert proc.returncode == 0, proc.stderr
    assert "round 1:" in proc.stderr and "is a dip" in proc.stderr
    assert "stopped: 1 rounds done" in proc.stderr
    proc = benchdb(
        "refine", "-k", KERNEL, "--rounds", "1", "--sample-time", "0.002", "--json",
        "--db", sqlite_url,
    )  # fmt: skip
    report = json.loads(proc.stdout)
    assert report["rounds"][0]["round"] == 1 and report["rounds"][0]["added"]
    assert all(math.isfinite(g["error_pct"]) for g in report["gaps_left"])


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["-k", "nope"], "unknown kernel 'nope'"),
        (["-k", ","], "--kernels is empty"),
        (["-k", KERNEL, "--precision", "float64,float32"], "one precision at a time"),
        (["-k", KERNEL, "--method", "cubic"], "unknown method 'cubic'"),
        (["-k", KERNEL, "--threads", "999"], "--threads '999'"),
        (["-k", KERNEL, "--time-budget", "0"], "Invalid value for '--time-budget'"),
        (["-k", KERNEL, "--rounds", "0"], "Invalid value for '--rounds'"),
        ([], "Missing option '--kernels'"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_creates_no_database(tmp_path, args, says) -> None:
    path = tmp_path / "none.sqlite"
    assert_user_error(benchdb("refine", *args, "--db", f"sqlite:///{path}"), says)
    assert not path.exists()


def test_without_a_collection_here_refine_says_collect_first(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'empty.sqlite'}"
    db = open_database(url)
    add_run(db, KERNEL, SIZES, step_curve())  # another environment's data: not refined
    db.close()
    proc = benchdb("refine", "-k", "stream.triad", "--db", url)
    assert_user_error(proc, "benchdb collect --kernels")
    db = open_database(url)
    with db.reading() as s:
        assert len(list(s.scalars(select(Run)))) == 1
        assert len(list(s.scalars(select(Measurement)))) == len(SIZES)
    db.close()
