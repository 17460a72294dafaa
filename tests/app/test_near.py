"""``benchdb app calibrate --near GRID``: fresh curve points on both sides of one grid."""

from __future__ import annotations

import pytest
from benchdb.collectors.app.exchanges import PASSES
from benchdb.collectors.app.near import NEAR_FACTOR, NEAR_TAG, near_plan
from benchdb.kernels.geometry import SHALLOW

from benchdb.app.exchange_table import CALIBRATION_TAG
from benchdb.app.model import populated_context
from benchdb.app.runs import app_runs
from benchdb.db.engine import open_database
from benchdb.errors import UserError
from benchdb.predict import predict
from tests.clihelpers import assert_user_error, benchdb


def _fp(shape: tuple[int, int]) -> float:
    return SHALLOW.footprint_bytes(shape, "float64")


@pytest.mark.parametrize("side", [40, 400, 1606])
def test_plan_brackets_every_block_but_never_measures_it(side: int) -> None:
    grid = (side, side)
    plan = near_plan(grid, 2)
    for target, squares in ((grid, plan.single), ((side // 2, side), plan.populated)):
        lo, hi = (_fp(s) / _fp(target) for s in squares)
        assert 1 / NEAR_FACTOR**1.5 < lo < 1 < hi < NEAR_FACTOR**1.5, (target, squares)
    assert {c.decomp.key for c in plan.exchanges} == {"1x2", "2x1"}
    sides = {c.grid[0] for c in plan.exchanges}
    assert len(sides) == 2 and side not in sides and all(s % 2 == 0 for s in sides)
    assert min(sides) < side < max(sides)


def test_plan_needs_a_grid_the_ranks_divide() -> None:
    with pytest.raises(UserError, match="multiples of 2"):
        near_plan((41, 41), 2)


def test_near_without_a_full_calibration_is_refused(sqlite_url: str, tmp_path) -> None:
    untouched = tmp_path / "never.sqlite"
    proc = benchdb("app", "calibrate", "--near", "41x41", "--db", f"sqlite:///{untouched}")
    assert_user_error(proc, "multiples of 2")
    assert not untouched.exists()  # checked before the database is opened
    proc = benchdb("app", "calibrate", "--near", "40x40", "--db", sqlite_url)
    assert_user_error(proc, "app calibrate --ranks 2` first")
    assert app_runs(open_database(sqlite_url)) == []
    proc = benchdb("app", "calibrate", "--near", "40x40", "--quick", "--db", sqlite_url)
    assert_user_error(proc, "leave out --quick")


@pytest.mark.mpi
def test_near_points_carry_the_lookup_at_the_target(sqlite_url: str) -> None:
    sizes = "8x8,12x12,64x64"  # none is a bracket of 40x40 (38, 42) or of 20x40 (27, 30)
    for args in (
        ("collect", "--kernels", "shallow", "--sizes", sizes, "--quick", "--quiet"),
        ("app", "calibrate", "--ranks", "2", "--sizes", sizes, "--quick", "--no-exchanges"),
    ):
        proc = benchdb(*args, "--db", sqlite_url)
        assert proc.returncode == 0, proc.stderr
    proc = benchdb("app", "calibrate", "--near", "40x40", "--json", "--db", sqlite_url)
    assert proc.returncode == 0, proc.stderr
    db = open_database(sqlite_url)
    plan = near_plan((40, 40), 2)
    for ranks, target, squares in ((1, (40, 40), plan.single), (2, (40, 20), plan.populated)):
        answer = predict(db, "shallow.pnew", [target], context=populated_context(ranks)).iloc[0]
        bracket = (answer["lo_footprint_bytes"], answer["hi_footprint_bytes"])
        assert bracket == tuple(_fp(s) for s in squares), (ranks, bracket)
    runs = app_runs(db, tag=NEAR_TAG)
    assert len(runs) == PASSES * len(plan.exchanges)
    assert all(CALIBRATION_TAG in r["tags"] for r in runs)
    db.close()
