"""benchmarks/scale.py's history generator writes a database the commands read: the runs,
hosts, classes and baselines it says, a planted step that ``history`` finds where it was
planted, and ``predict``, ``compare`` and a report's pick that answer from it."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import func, select

from benchdb.db.engine import Database, open_database
from benchdb.db.models import Baseline, Environment, Machine, Measurement, NodeClass, Run
from benchdb.predict.lookup import prepare_lookup
from benchdb.regress import compare_runs, kernel_history
from benchdb.regress.pick import pick_runs
from tests.predict.synth import add_run, log_linear

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
NOISE_MARGIN = 0.02  # a level is a median of runs each scattered by the generator's 2 %


@pytest.fixture
def history_module(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    yield importlib.import_module("scale_history")
    sys.modules.pop("scale_history", None)


@pytest.fixture
def template(tmp_path: Path) -> Iterator[Database]:
    """One complete run of a 2-D kernel at eight sizes (synthetic rates)."""
    db = open_database(f"sqlite:///{tmp_path / 'template.sqlite'}")
    add_run(db, "stencil2d5", [(m, m) for m in np.geomspace(20, 1500, 8).astype(int)], log_linear)
    yield db
    db.close()


def test_generated_history_is_read_by_the_commands(history_module, template, db: Database) -> None:
    points = history_module.read_template(template)
    assert {p.kernel["name"] for p in points} == {"stencil2d5"}
    spec = history_module.HistorySpec(
        runs=60, hosts=4, classes=2, commits=6, slowdowns=1, full_every=10, seed=3,
        ci_kernels=("stencil2d5",),
    )  # fmt: skip
    written = history_module.generate(db, points, spec)
    assert written.runs == 60 and written.points == 60 * len(points)
    with db.reading() as s:
        assert s.scalar(select(func.count()).select_from(Run)) == 60
        assert s.scalar(select(func.count(func.distinct(Run.uuid)))) == 60
        assert s.scalar(select(func.count()).select_from(Machine)) == 4
        assert s.scalar(select(func.count()).select_from(NodeClass)) == 2
        assert s.scalar(select(func.count()).select_from(Baseline)) == 2
        stored = s.scalar(select(func.count()).select_from(Measurement))
    assert stored == written.points

    (planted,) = written.planted
    _, series = kernel_history(db, planted.kernel)
    assert series and all(len(s.values) == 30 for s in series)  # class 0: every other run
    first_slow = min(r for r, c in _run_commits(db).items() if c >= planted.commit and r % 2 == 1)
    # the step's size, between the seasonal drift's extremes on either side of it
    drift, slow = history_module.DRIFT, history_module.SLOWDOWN
    low, high = slow * (1 - drift) / (1 + drift) - 1, slow * (1 + drift) / (1 - drift) - 1
    stepped = [s for s in series if s.steps]
    assert stepped, "the planted 1.2x step was not found"
    for s in stepped:
        assert [st["run_id"] for st in s.steps] == [first_slow]
        assert low - NOISE_MARGIN < s.steps[0]["change"] < high + NOISE_MARGIN

    lookup = prepare_lookup(db, "stencil2d5", method="linear", store=False)
    assert len(lookup.curve) == len(points)
    pick = pick_runs(db)
    assert pick.baseline is not None
    comparison = compare_runs(db, str(pick.baseline.run_id), str(pick.collection.run_id))
    assert len(comparison.results) == len(points)


def _run_commits(db: Database) -> dict[int, int]:
    """Each run's commit index (its environment's commit, as the generator numbered them)."""
    with db.reading() as s:
        rows = s.execute(
            select(Run.id, Environment.git_commit).join(
                Environment, Run.environment_id == Environment.id
            )
        )
        return {run_id: int(commit, 16) for run_id, commit in rows}
