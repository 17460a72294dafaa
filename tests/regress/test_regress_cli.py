"""``compare``, ``history`` and ``baseline`` through the CLI, on runs written via the ORM.

Samples here are synthetic sets with known answers (a kernel 20 % slower, an
unchanged one); the real-timing tests are in test_real.py.  Every bad input
must exit 2 with one line naming the fix and leave the database unchanged.

Starting the console script costs seconds on the shared machine, so most
cases run the typer app in-process (:func:`cli`, which maps ``UserError`` to
exit 2 as ``main`` does); the subprocess runs check the real entry point's
exit codes and one-line errors.
"""

from __future__ import annotations

import json

import pytest
from sqlalchemy import func, select

from benchdb.cli.app import app
from benchdb.db.engine import Database, open_database
from benchdb.db.models import Baseline, Run
from benchdb.errors import UserError
from tests.clihelpers import assert_user_error, benchdb, runner

from .rows import add_run, other_environment, other_machine


class Result:
    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def cli(*args: str) -> Result:
    """The typer app in-process; a ``UserError`` becomes exit 2 with its message on stderr."""
    res = runner().invoke(app, list(args), catch_exceptions=True)
    if isinstance(res.exception, UserError):
        return Result(2, res.stdout, f"error: {res.exception}\n")
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        raise res.exception
    return Result(res.exit_code, res.stdout, "")


QUIET = [1.000e-3, 1.004e-3, 0.998e-3, 1.002e-3, 1.001e-3]
SHAPES = [(1000,), (4000,), (16000,)]


def points(slow: dict[str, float] | None = None) -> dict:
    slow = slow or {}
    return {
        (k, shape): [x * slow.get(k, 1.0) * (1 + i) for x in QUIET]
        for k in ("stream.triad", "stream.copy")
        for i, shape in enumerate(SHAPES)
    }


@pytest.fixture
def two_runs(db: Database) -> tuple[int, int]:
    base = add_run(db, points(), tags=["before"])
    cont = add_run(
        db,
        points({"stream.triad": 1.2}),
        tags=["after"],
        environment=other_environment(numba="0.99.0"),
    )
    return base, cont


def counts(db: Database) -> tuple[int, int]:
    with db.session() as s:
        return (
            s.scalar(select(func.count()).select_from(Run)),
            s.scalar(select(func.count()).select_from(Baseline)),
        )


def test_compare_flags_the_slower_kernel_and_exits_1(db_url: str, db: Database, two_runs) -> None:
    proc = cli("compare", "before", "after", "--db", db_url, "--json")
    assert proc.returncode == 1, proc.stderr
    out = json.loads(proc.stdout)
    assert out["regressed_kernels"] == ["stream.triad"]
    verdicts = {(r["kernel"], r["shape_key"]): r["verdict"] for r in out["results"]}
    assert {k for k, v in verdicts.items() if v == "slower"} == {
        ("stream.triad", "1000"),
        ("stream.triad", "4000"),
        ("stream.triad", "16000"),
    }
    assert {r["verdict"] for r in out["results"] if r["kernel"] == "stream.copy"} == {"unchanged"}
    assert {"field": "numba", "before": detect_numba(), "after": "0.99.0"} in out[
        "environment_diff"
    ]
    table = cli("compare", "before", "after", "--db", db_url)
    assert table.returncode == 1
    assert "regression in stream.triad" in table.stdout and "numba" in table.stdout


def detect_numba() -> str:
    from benchdb.environment import detect_environment

    return detect_environment().numba


def test_compare_unchanged_exits_0_and_latest_previous_resolve(db_url: str, db: Database) -> None:
    add_run(db, points(), tags=["a"])
    add_run(db, points(), tags=["b"])
    proc = cli("compare", "previous", "latest", "--db", db_url, "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["kernel_counts"]["unchanged"] == 2 and not out["regression"]
    assert out["baseline"]["tags"] == ["a"] and out["contender"]["tags"] == ["b"]


NOISY = [1.0e-3, 1.5e-3, 0.7e-3, 1.2e-3, 0.8e-3]  # CV ~30 %: flagged noisy


def test_large_slowdowns_of_different_sizes_are_all_slower(db_url: str, db: Database) -> None:
    """Issue 23: NUMBA_OPT=0 made kernels 8-80x slower and compare called some of them noisy
    (a noise floor from the spread of all points' ratios, a majority of points needed)."""
    kernels = {"stream.triad": 8.0, "stream.copy": 25.0, "stream.sum": 80.0}
    base = {(k, shape): NOISY for k in kernels for shape in SHAPES}
    slow = {(k, shape): [x * f for x in NOISY] for k, f in kernels.items() for shape in SHAPES}
    slow[("stream.triad", SHAPES[0])] = [x * 8 for x in [1.0e-3, 4e-3, 0.9e-3, 4.1e-3, 1.1e-3]]
    add_run(db, base, tags=["opt"])
    add_run(db, slow, tags=["noopt"])
    proc = cli("compare", "opt", "noopt", "--db", db_url, "--json")
    assert proc.returncode == 1, proc.stderr
    out = json.loads(proc.stdout)
    assert out["regressed_kernels"] == sorted(kernels)
    for k in out["kernels"]:
        assert k["ci_low"] > 1.05 and k["ci_low"] <= k["median_ratio"] <= k["ci_high"], k


def test_a_burst_at_one_point_is_not_a_kernel_regression(db_url: str, db: Database) -> None:
    """One point's samples all 3x (another process's burst) among five unchanged points."""
    shapes = [(1000,), (2000,), (4000,), (8000,), (16000,)]
    base = {("stream.triad", s): [x * (i + 1) for x in QUIET] for i, s in enumerate(shapes)}
    burst = dict(base)
    burst[("stream.triad", shapes[2])] = [x * 3 * 3 for x in QUIET]
    add_run(db, base, tags=["a"])
    add_run(db, burst, tags=["b"])
    proc = cli("compare", "a", "b", "--db", db_url, "--json")
    assert proc.returncode == 0, proc.stdout
    out = json.loads(proc.stdout)
    assert out["point_counts"]["slower"] == 1
    assert out["kernels"][0]["verdict"] == "noisy"
    assert cli("compare", "a", "b", "--per-point", "--db", db_url).returncode == 1


def test_threshold_option(db_url: str, db: Database, two_runs) -> None:
    proc = cli("compare", "before", "after", "--threshold", "30", "--db", db_url, "--json")
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["threshold"] == pytest.approx(0.30)


def test_baseline_set_show_and_compare_against_it(db_url: str, db: Database, two_runs) -> None:
    base, cont = two_runs
    assert "no baseline pinned" in cli("baseline", "show", "--db", db_url).stdout
    assert cli("baseline", "set", str(base), "--db", db_url).returncode == 0
    shown = json.loads(cli("baseline", "show", "--db", db_url, "--json").stdout)
    assert [row["run_id"] for row in shown] == [base]
    proc = cli("compare", "baseline", "latest", "--db", db_url, "--json")
    assert proc.returncode == 1
    out = json.loads(proc.stdout)
    assert (out["baseline"]["run_id"], out["contender"]["run_id"]) == (base, cont)
    assert cli("baseline", "set", "latest", "--db", db_url).returncode == 0
    shown = json.loads(cli("baseline", "show", "--db", db_url, "--json").stdout)
    assert [row["run_id"] for row in shown] == [cont]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["compare", "999", "latest"], "no run 999"),
        (["compare", "nosuchtag", "latest"], "no run id or tag 'nosuchtag'"),
        (["compare", "baseline", "latest"], "benchdb baseline set RUN"),
        (["compare", "before", "before"], "name two different runs"),
        (["baseline", "set", "999"], "no run 999"),
        (["history", "--kernel", "nosuch.kernel"], "measured kernels: stream.copy, stream.triad"),
        (["history", "--kernel", "stream.triad", "--shape", "7"], "measured shapes: 1000, 4000"),
        (["history", "--kernel", "stream.triad", "--shape", "0x3"], "zero or negative"),
        (["history", "--kernel", "stream.triad", "--detector", "cusum"], "potts, zscore"),
    ],
)
def test_bad_input_exits_2_and_writes_nothing(
    db_url: str, db: Database, two_runs, args: list[str], needle: str
) -> None:
    before = counts(db)
    assert_user_error(cli(*args, "--db", db_url), needle)
    assert counts(db) == before


def test_runs_of_different_machines_are_refused(sqlite_url: str) -> None:
    """Through the real console script: exit 2, one line, nothing written."""
    db_url = sqlite_url
    db = open_database(db_url)
    add_run(db, points(), tags=["here"])
    add_run(db, points(), tags=["there"], machine=other_machine())
    before = counts(db)
    proc = benchdb("compare", "here", "there", "--db", db_url)
    assert_user_error(proc, "only runs of the same node class (the same hardware) are comparable")
    assert "elsewhere" in proc.stderr
    proc = cli("baseline", "set", "there", "--machine", "1", "--db", db_url)
    assert_user_error(proc, "a baseline must be a run of its own class")
    assert counts(db) == before


def test_nothing_comparable_is_exit_2(db_url: str, db: Database) -> None:
    add_run(db, {("stream.triad", (100,)): QUIET}, tags=["x"])
    add_run(db, {("stream.triad", (200,)): QUIET}, tags=["y"])
    assert_user_error(cli("compare", "x", "y", "--db", db_url), "no valid point in common")


def test_history_finds_the_step_and_the_environment_change(db_url: str, db: Database) -> None:
    runs = [add_run(db, points(), tags=[f"r{i}"]) for i in range(4)]
    runs += [
        add_run(
            db,
            points({"stream.triad": 1.25}),
            tags=[f"s{i}"],
            environment=other_environment(numba="0.99.0"),
        )
        for i in range(3)
    ]
    for detector in ("potts", "zscore"):
        proc = cli(
            "history", "--kernel", "stream.triad", "--detector", detector, "--db", db_url, "--json"
        )
        assert proc.returncode == 0, proc.stderr
        out = json.loads(proc.stdout)
        assert len(out["series"]) == 3
        for series in out["series"]:
            assert [v["run_id"] for v in series["values"]] == runs
            (step,) = series["steps"]
            assert (step["previous_run_id"], step["run_id"]) == (runs[3], runs[4])
            assert step["direction"] == "slower"
            assert step["change"] == pytest.approx(0.25, abs=0.01)
            assert any(d["field"] == "numba" for d in step["environment_diff"])
    table = cli("history", "--kernel", "stream.triad", "--shape", "4000", "--db", db_url)
    assert table.returncode == 0 and "+25.0%" in table.stdout and "numba" in table.stdout
    quiet = cli("history", "--kernel", "stream.copy", "--db", db_url, "--json")
    assert all(s["steps"] == [] for s in json.loads(quiet.stdout)["series"])


def test_console_script_exit_codes(sqlite_url: str) -> None:
    """The real entry point: 1 on a regression (for CI), 0 when unchanged."""
    db = open_database(sqlite_url)
    add_run(db, points(), tags=["before"])
    add_run(db, points({"stream.triad": 1.2}), tags=["after"])
    add_run(db, points({"stream.triad": 1.2}), tags=["again"])
    assert benchdb("compare", "before", "after", "--db", sqlite_url).returncode == 1
    assert benchdb("compare", "after", "again", "--db", sqlite_url).returncode == 0
