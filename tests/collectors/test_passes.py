"""Passes over a sweep: their order, and how a later pass pools its samples."""

from __future__ import annotations

import numpy as np
import pytest
from benchdb.collectors.plan import Point, SweepPlan
from benchdb.collectors.record import add_pass, failed_rows, measurement_rows
from benchdb.collectors.timing import PointTiming, time_point
from benchdb.kernels import get_benchmark

TRIAD = get_benchmark("stream.triad")
KERNELS = {TRIAD.kernels[0].name: (7, TRIAD.kernels[0])}
POINTS = tuple(Point("stream.triad", (n,), "float64", 1, 24 * n) for n in (100, 200, 300))


def test_later_passes_alternate_direction_and_skip_what_is_stored() -> None:
    plan = SweepPlan("custom", POINTS, 0.01, 5, passes=3)
    order = [(p, pt.shape[0]) for p, pt in plan.schedule({})]
    assert order == [(0, 100), (0, 200), (0, 300), (1, 300), (1, 200), (1, 100),
                     (2, 100), (2, 200), (2, 300)]  # fmt: skip
    # a run killed during pass 1, after (1, 300): 300 holds two passes, the others one
    stored = {POINTS[0].key: 1, POINTS[1].key: 1, POINTS[2].key: 2}
    rest = [(p, pt.shape[0]) for p, pt in plan.schedule(stored)]
    assert rest == [(1, 200), (1, 100), (2, 100), (2, 200), (2, 300)]


def test_an_interleaved_plan_repeats_each_point_one_point_later() -> None:
    plan = SweepPlan("custom", POINTS, 0.01, 5, passes=2, interleaved=True)
    order = [(p, pt.shape[0]) for p, pt in plan.schedule({})]
    assert order == [(0, 100), (0, 200), (1, 100), (0, 300), (1, 200), (1, 300)]
    stored = {POINTS[0].key: 2, POINTS[1].key: 1}  # killed after (1, 100)
    assert [(p, pt.shape[0]) for p, pt in plan.schedule(stored)] == [(0, 300), (1, 200), (1, 300)]
    config = plan.config()
    assert config["interleaved"] and SweepPlan.from_config(config) == plan
    assert "interleaved" not in SweepPlan("custom", POINTS, 0.01, 5, passes=2).config()


def test_a_later_pass_pools_samples_and_recomputes_the_statistics() -> None:
    info, kernels = TRIAD.kernels[0], KERNELS
    quiet = [1.0e-3, 1.01e-3, 0.99e-3, 1.0e-3, 1.02e-3]
    busy = [1.3e-3, 1.31e-3, 1.29e-3, 1.3e-3, 1.32e-3]  # a spell of another tenant's load
    first = PointTiming(10, {info.name: busy}, 3.0)
    [row] = measurement_rows(1, POINTS[0], {info.name: 100}, first, "x", kernels)
    assert row.passes == 1 and row.t_median == 1.3e-3
    for _ in range(2):
        add_pass(row, PointTiming(12, {info.name: quiet}, 3.0), kernels)
    assert row.passes == 3 and row.samples == [*busy, *quiet, *quiet]
    assert row.t_median == float(np.median([*busy, *quiet, *quiet])) < 1.05e-3
    assert row.t_min == 0.99e-3
    assert row.flop_rate == info.flops_per_point * 100 / row.t_median
    assert row.valid


def test_a_nonfinite_checksum_in_a_later_pass_invalidates_the_point() -> None:
    info, kernels = TRIAD.kernels[0], KERNELS
    samples = [1e-3] * 5
    first = PointTiming(10, {info.name: samples}, 3.0)
    [row] = measurement_rows(1, POINTS[0], {info.name: 100}, first, "x", kernels)
    add_pass(row, PointTiming(10, {info.name: samples}, float("nan")), kernels)
    assert not row.valid and "nonfinite_checksum" in row.flags


def test_a_checksum_that_changes_between_passes_invalidates_the_point() -> None:
    info, kernels = TRIAD.kernels[0], KERNELS
    samples = [1e-3] * 5
    [row] = measurement_rows(
        1, POINTS[0], {info.name: 100}, PointTiming(10, {info.name: samples}, 3.0), "x", kernels
    )
    add_pass(row, PointTiming(10, {info.name: samples}, 3.0), kernels)
    assert row.valid
    add_pass(row, PointTiming(10, {info.name: samples}, 3.5), kernels)
    assert not row.valid and row.passes == 3
    assert "checksum_mismatch: pass 3 gave 3.5, pass 1 3.0" in row.flags
    add_pass(row, PointTiming(10, {info.name: samples * 2}, 3.0), kernels)  # the reason stays
    assert not row.valid and row.t_cv == 0 and "noisy" not in row.flags


def test_a_failed_pass_is_recorded_and_the_point_stays_invalid() -> None:
    info, kernels = TRIAD.kernels[0], KERNELS
    [row] = failed_rows(1, POINTS[0], {info.name: 100}, "exit status 139: segfault", "x", kernels)
    assert not row.valid and row.samples == [] and row.passes == 1
    assert row.flags == ["failed: pass 1: exit status 139: segfault"]
    add_pass(row, PointTiming(10, {info.name: [1e-3] * 5}, 3.0), kernels)
    assert not row.valid and row.passes == 2 and row.t_median == 1e-3


@pytest.mark.parametrize("name", ["shallow", "stencil2d5"])
def test_the_checksum_does_not_depend_on_the_calibrated_repetitions(name: str) -> None:
    bench = get_benchmark(name)
    short = time_point(bench.prepare((40, 30), "float64", 1), 0.001, 5)
    long = time_point(bench.prepare((40, 30), "float64", 1), 0.02, 5)
    assert short.repetitions < long.repetitions
    assert short.checksum == long.checksum
