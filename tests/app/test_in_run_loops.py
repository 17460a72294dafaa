"""A program's loops in its own runs against its curves (benchdb.app.in_run_loops)."""

from __future__ import annotations

import math

import pytest
from benchdb.kernels.layout import Layout

from benchdb.app.decomposition import Decomposition
from benchdb.app.exchange_table import CALIBRATION_TAG
from benchdb.app.in_run_loops import calibrated_loops, in_run_loops

GEOMETRY = Layout(("M", "N"), arrays=1, contiguous="M").geometry()


def summary(grid: int, decomp: str, loops_s: float, steps: int = 10, **extra) -> dict:
    """An app run summary as :func:`benchdb.db.app_runs.app_runs` gives it."""
    return {"tags": [CALIBRATION_TAG, "ppn2"], "ranks": 2, "precision": "float64",
            "grid": [grid, grid], "decomposition": decomp, "steps": steps,
            "loops_s": {"loops": loops_s}, **extra}  # fmt: skip


def test_each_grid_gives_the_median_of_its_runs_per_step() -> None:
    runs = [summary(64, "2x1", t) for t in (1.0, 3.0, 2.0)]
    runs += [summary(64, "2x1", 9.0, steps=20), {**summary(64, "1x2", 5.0), "tags": ["other"]}]
    found = calibrated_loops(runs, 2, "float64")
    assert [(c.grid, c.decomp.key, c.steps, c.loops_per_step_s) for c in found] == [
        ((64, 64), "2x1", 10, pytest.approx(0.2)),
        ((64, 64), "2x1", 20, pytest.approx(0.45)),
    ]
    assert calibrated_loops(runs, 4, "float64") == []


def test_runs_across_nodes_give_the_loops_of_runs_placed_alike() -> None:
    across = {**summary(64, "2x1", 7.0), "tags": [CALIBRATION_TAG, "ppn1"]}
    runs = [summary(64, "2x1", 1.0), across]
    [one_node] = calibrated_loops(runs, 2, "float64")
    [spread] = calibrated_loops(runs, 2, "float64", ranks_per_node=1)
    assert (one_node.loops_per_step_s, spread.loops_per_step_s) == pytest.approx((0.1, 0.7))


def footprint(local: tuple[int, int]) -> float:
    return math.log(GEOMETRY.footprint_bytes(local, "float64"))


def test_the_factor_is_interpolated_in_log_footprint_and_held_beyond() -> None:
    runs = [summary(g, "2x1", 1.2 if g == 64 else 1.5) for g in (64, 256)]
    cal = calibrated_loops(runs, 2, "float64")
    table = in_run_loops(cal, [0.1, 0.1], GEOMETRY, "float64")
    two = Decomposition(2, 1)
    assert table.factor(two, (32, 64)) == pytest.approx(1.2)
    assert table.factor(two, (128, 256)) == pytest.approx(1.5)
    mid = (64, 128)
    w = (footprint(mid) - footprint((32, 64))) / (footprint((128, 256)) - footprint((32, 64)))
    assert table.factor(two, mid) == pytest.approx(
        math.exp((1 - w) * math.log(1.2) + w * math.log(1.5))
    )
    assert table.factor(two, (4, 4)) == pytest.approx(1.2)  # held at the ends
    assert table.factor(two, (4096, 4096)) == pytest.approx(1.5)
    assert table.factor(Decomposition(1, 2), mid) == 1.0  # not calibrated: the curves alone


def test_one_odd_grid_among_its_neighbours_is_smoothed_away() -> None:
    loops = {16: 1.1, 32: 1.1, 64: 3.0, 128: 1.1, 256: 1.1}
    cal = calibrated_loops([summary(g, "2x1", t) for g, t in loops.items()], 2, "float64")
    table = in_run_loops(cal, [0.1] * len(cal), GEOMETRY, "float64")
    assert table.factor(Decomposition(2, 1), (32, 64)) == pytest.approx(1.1)
