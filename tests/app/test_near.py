"""``benchdb app calibrate --near GRID``: fresh curve points on both sides of one grid."""

from __future__ import annotations

import json

import numpy as np
import pytest
from benchdb.collectors.app.exchanges import PASSES
from benchdb.collectors.app.near import NEAR_FACTOR, NEAR_TAG, near_plan
from benchdb.kernels.builtin.shallow import SHALLOW

from benchdb.app.context import LoopContext
from benchdb.app.exchange_table import CALIBRATION_TAG
from benchdb.db.app_runs import app_runs
from benchdb.db.engine import open_database
from benchdb.errors import UserError
from benchdb.predict import predict
from benchdb.predict.aspect import SQUARE_TOL, log_aspect
from benchdb.shapes import parse_shape
from tests.clihelpers import assert_user_error, benchdb


def _fp(shape: tuple[int, int]) -> float:
    return SHALLOW.footprint_bytes(shape, "float64")


@pytest.mark.parametrize("side", [40, 400, 1606])
def test_plan_brackets_every_block(side: int) -> None:
    grid = (side, side)
    plan = near_plan(grid, 2)
    for target, brackets in (
        (grid, plan.single),
        ((side // 2, side), plan.populated),
        ((side, side // 2), plan.populated),
    ):
        rows = [b for b in brackets if b[0] == target[0]]  # axis 0 is contiguous
        lo, hi = sorted(_fp(b) / _fp(target) for b in rows)
        assert 1 / NEAR_FACTOR**1.5 < lo < 1 < hi < NEAR_FACTOR**1.5, (target, brackets)
    assert len(plan.single) == 2 and len(plan.populated) == 4  # only the blocks' own rows
    assert {c.decomp.key for c in plan.exchanges} == {"1x2", "2x1"}
    sides = {c.grid[0] for c in plan.exchanges}
    assert len(sides) == 2 and side not in sides and all(s % 2 == 0 for s in sides)
    assert min(sides) < side < max(sides)


def test_square_block_brackets_join_the_square_curve() -> None:
    # 70x64 and 70x76 keep 70x70's rows and count as squares in the lookup
    a = log_aspect(SHALLOW, np.array(near_plan((70, 70), 2).single))
    assert np.all(np.abs(a) <= SQUARE_TOL)


def test_plan_needs_a_grid_the_ranks_divide() -> None:
    with pytest.raises(UserError, match="multiples of 2"):
        near_plan((41, 41), 2)


def test_near_without_a_full_calibration_is_refused(sqlite_url: str, tmp_path) -> None:
    untouched = tmp_path / "never.sqlite"
    proc = benchdb("app", "calibrate", "--near", "41x41", "--db", f"sqlite:///{untouched}")
    assert_user_error(proc, "multiples of 2")
    assert not untouched.exists()  # checked before the database is opened
    open_database(sqlite_url).close()  # a database, but no calibration in it
    proc = benchdb("app", "calibrate", "--near", "40x40", "--db", sqlite_url)
    assert_user_error(proc, "app calibrate --ranks 2` first")
    assert app_runs(open_database(sqlite_url)) == []
    proc = benchdb("app", "calibrate", "--near", "40x40", "--quick", "--db", sqlite_url)
    assert_user_error(proc, "leave out --quick")


@pytest.mark.mpi
def test_near_points_carry_the_lookup_at_the_target(sqlite_url: str) -> None:
    # brackets: 40x37, 40x44 around 40x40 (1 process); 20x37, 20x44, 40x18, 40x22 around
    # 20x40 and 40x20 (2 ranks).  40x40 and 28x28 lie between them: old points there must
    # be measured again.
    sizes = "8x8,12x12,28x28,40x40,64x64"
    for args in (
        ("collect", "--kernels", "shallow", "--sizes", sizes, "--quick", "--quiet"),
        ("app", "calibrate", "--ranks", "2", "--sizes", sizes, "--quick", "--no-exchanges"),
    ):
        proc = benchdb(*args, "--db", sqlite_url)
        assert proc.returncode == 0, proc.stderr
    proc = benchdb("app", "calibrate", "--near", "40x40", "--json", "--db", sqlite_url)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["single_sizes"] == "40x37,40x40,40x44"
    assert result["populated_sizes"] == "20x37,20x44,28x28,40x18,40x22"
    db = open_database(sqlite_url)
    plan = near_plan((40, 40), 2)
    for ranks, target, spec in ((1, (40, 40), "single_sizes"), (2, (40, 20), "populated_sizes")):
        answer = predict(db, "shallow.pnew", [target], context=str(LoopContext(ranks))).iloc[0]
        fresh = {_fp(parse_shape(k)) for k in result[spec].split(",")}
        bracket = {answer["lo_footprint_bytes"], answer["hi_footprint_bytes"]}
        assert answer["same_rows"] and bracket <= fresh, (ranks, bracket, fresh)
    runs = app_runs(db, tag=NEAR_TAG)
    assert len(runs) == PASSES * len(plan.exchanges)
    assert all(CALIBRATION_TAG in r["tags"] for r in runs)
    db.close()
