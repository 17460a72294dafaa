"""The run-to-run scatter of the baseline's replicates (benchdb/regress/replicates.py).

Synthetic runs (rows.py ``add_run``) whose every point moves by a known factor: a
host that drifts by whole runs.  Two runs alone cannot tell that drift from a
change; the replicates can, and a change far beyond it stays a change.
"""

from __future__ import annotations

import math

import pytest

from benchdb.db.engine import Database
from benchdb.db.models import Kernel, Run
from benchdb.db.run_records import run_record
from benchdb.regress import compare_runs
from benchdb.regress.replicates import replicate_runs, run_scatter

from .rows import add_run, other_environment
from .test_regress_cli import cli, points


def _ids(db: Database, baseline: int, contender: int) -> list[int]:
    with db.session() as s:
        return replicate_runs(
            s, run_record(s.get(Run, baseline)), run_record(s.get(Run, contender))
        )


def test_replicates_share_the_baselines_settings_and_environment(db: Database) -> None:
    early = add_run(db, points())
    add_run(db, points(), environment=other_environment(numpy="0.0.1"))
    add_run(db, points(), config={"mode": "quick"})
    base = add_run(db, points())
    contender = add_run(db, points())
    add_run(db, points())  # newer than both: it may hold the change again
    assert _ids(db, base, contender) == [early, base]
    assert _ids(db, contender, base) == [early, contender]


def test_scatter_is_the_rms_of_consecutive_whole_run_changes(db: Database) -> None:
    runs = [add_run(db, points({"stream.triad": f, "stream.copy": f})) for f in (1, 1.1, 1)]
    scatter = run_scatter(db, runs, {"stream.triad": _version(db, "stream.triad")})
    assert set(scatter) == {("stream.triad", 1, "float64", "isolated")}  # only the versions given
    (triad,) = scatter.values()
    assert triad.pairs == 2
    assert triad.log_rms == pytest.approx(math.log(1.1))


def _version(db: Database, kernel: str) -> str:
    with db.session() as s:
        return s.query(Kernel.version).filter(Kernel.name == kernel).scalar()


@pytest.mark.parametrize(("factor", "slower"), [(1.09, False), (2.0, True)])
def test_a_drift_the_replicates_show_is_no_regression(
    db: Database, factor: float, slower: bool
) -> None:
    for f in (1.05, 0.96, 1.07, 1.0):  # the host's history: whole runs 4-10 % apart
        add_run(db, points({"stream.triad": f, "stream.copy": f}), tags=[f"r{f}"])
    contender = add_run(db, points({"stream.triad": factor, "stream.copy": factor}))
    base = "r1.0"
    alone = compare_runs(db, base, str(contender), replicates=False)
    charged = compare_runs(db, base, str(contender))
    assert len(alone.regressions) == 2  # the samples alone: both kernels significantly slower
    assert len(charged.regressions) == (2 if slower else 0)
    assert charged.replicates and set(charged.kernels["scatter_pairs"]) == {3}
    widened = charged.kernels["ci_high"] - charged.kernels["ci_low"]
    assert (widened > alone.kernels["ci_high"] - alone.kernels["ci_low"]).all()


def test_compare_says_whether_the_scatter_was_measured(db_url: str, db: Database) -> None:
    for tag in ("a", "b", "c"):
        add_run(db, points(), tags=[tag])
    add_run(db, points({"stream.triad": 1.2}), tags=["d"])
    one_pair = cli("compare", "b", "c", "--db", db_url).stdout
    assert "run-to-run scatter: not measured (fewer than 3 runs" in " ".join(one_pair.split())
    markdown = cli("compare", "c", "d", "--format", "markdown", "--db", db_url).stdout
    assert "Run-to-run scatter of unchanged code: 0.0%..0.0% (RMS over the baseline's" in (
        " ".join(markdown.split())
    )
