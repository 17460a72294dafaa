"""Cross-validation, independent-sweep validation and thread scaling on synthetic data."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from sqlalchemy import select

from benchdb.db.measurements import widest_environment
from benchdb.db.models import Environment
from benchdb.environment import detect_environment
from benchdb.errors import UserError
from benchdb.predict.source import resolve_machine_caches
from benchdb.predict.threads import amdahl, thread_scaling
from benchdb.predict.validate import split_runs, validate

from .synth import add_run, log_linear, square_sizes, step_curve

FIT = square_sizes(8, 1500, 20)
CHECK = [(m, int(m * 1.7)) for m in np.geomspace(9, 1200, 21).astype(int)]


def test_independent_sweep_and_loo_errors(sdb) -> None:
    add_run(sdb, "stencil2d5", FIT, log_linear)
    add_run(
        sdb,
        "stream.triad",
        [(n,) for n in np.geomspace(100, 3e6, 20).astype(int)],
        step_curve(8e9, 2e9),
    )
    check = add_run(sdb, "stencil2d5", CHECK, log_linear, tags=["validation"])
    report = validate(sdb)
    assert report["check_runs"] == [check] and report["split_rule"] == "tagged validation"
    res = {(r["kernel"], r["method"]): r for r in report["results"]}
    lin = res[("stencil2d5", "linear")]
    assert lin["loo"]["n"] == len(FIT) - 2
    assert lin["loo"]["median_abs_pct"] < 1e-6
    assert lin["check"]["n"] >= 19 and lin["check"]["max_abs_pct"] < 1e-6
    assert lin["check"]["n"] + lin["check"]["extrapolated_excluded"] == len(CHECK)
    assert set(m for k, m in res if k == "stencil2d5") == {
        "linear",
        "pchip",
        "logcurve",
        "eq5",
        "roofline",
        "escape",
    }
    assert res[("stencil2d5", "roofline")]["check"]["n"] > 0
    best = [r for r in report["results"] if r.get("best") and r["kernel"] == "stencil2d5"]
    assert len(best) == 1 and best[0]["method"] in ("linear", "pchip")


def test_split_rules() -> None:
    import datetime as dt

    t0 = dt.datetime(2024, 1, 1)
    rows = [
        {"run_id": 1, "run_tags": [], "run_started_at": t0},
        {"run_id": 2, "run_tags": [], "run_started_at": t0 + dt.timedelta(1)},
        {"run_id": 3, "run_tags": [], "run_started_at": t0 + dt.timedelta(2)},
    ]
    assert split_runs(rows, None, None).check_runs == (3,)
    assert split_runs(rows, [1], [2]).fit_runs == (1,)
    assert split_runs(rows, None, [1]).fit_runs == (2, 3)
    with pytest.raises(UserError, match="runs with data: 1, 2, 3"):
        split_runs(rows, [9], None)


def test_amdahl_parallel_fraction_recovered_per_level(sdb) -> None:
    curve = step_curve()
    add_run(sdb, "stencil2d5", FIT, curve)
    for t, f in ((2, 0.9), (4, 0.9)):
        add_run(sdb, "stencil2d5", FIT, lambda x, t=t, f=f: curve(x) * amdahl(t, f), threads=t)
    report = thread_scaling(sdb, "stencil2d5")
    assert report["threads"] == [1, 2, 4]
    for r in report["ranges"]:
        assert r["parallel_fraction"] == pytest.approx(0.9, abs=1e-6)
        assert r["speedup"]["2"] == pytest.approx(1 / 0.55, rel=1e-6)


def test_thread_scaling_needs_more_than_one_count(sdb) -> None:
    add_run(sdb, "stencil2d5", FIT, step_curve())
    with pytest.raises(UserError, match="measured with 1 thread only"):
        thread_scaling(sdb, "stencil2d5")


def test_baselines_use_the_environment_that_measured_most_kernels(sdb) -> None:
    """A later partial re-run in a new environment does not hide the environment that
    measured every kernel; of equals, the newer wins."""
    old = detect_environment()
    new = dataclasses.replace(old, git_commit="f" * 40)
    sizes = [(n,) for n in np.geomspace(100, 3e6, 6).astype(int)]
    for kernel in ("stream.triad", "stream.copy"):
        add_run(sdb, kernel, sizes, step_curve(8e9, 2e9), environment=old)
    add_run(sdb, "stream.copy", sizes, step_curve(8e9, 2e9), environment=new)
    scope = resolve_machine_caches(sdb, None).scope
    widest = widest_environment(sdb, scope, precision="float64", threads=1)
    with sdb.reading() as s:
        fingerprint = s.scalar(select(Environment.fingerprint).where(Environment.id == widest))
    assert fingerprint == old.fingerprint
    add_run(sdb, "stream.triad", sizes, step_curve(8e9, 2e9), environment=new)
    newer = widest_environment(sdb, scope, precision="float64", threads=1)
    assert newer != widest
