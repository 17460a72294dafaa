"""The sweep's plan by need and time (issue 33): its rounds, its rectangles, its bounds,
its estimate, and ``collect --dry-run`` for this machine and for described caches."""

from __future__ import annotations

import itertools
import json
import math
import time
from pathlib import Path

import pytest
from benchdb.collectors import estimate, sizes
from benchdb.collectors.plan import DEFAULT_TIME_BUDGET, build_plan
from benchdb.collectors.timing import calibrate
from benchdb.kernels import get_benchmark

from benchdb.machine import detect_machine
from tests.clihelpers import benchdb, invoke

MACHINE = detect_machine()
GIB = 2**30
MIB = 2**20
BIG_L3 = MACHINE.with_caches([48 * 1024, 2 * MIB, GIB])
VM_HOST = estimate.HostRates(stream=30e9, fresh=0.9e9)
"""The rates a 2-vCPU Intel VM with a 300 MiB L3 measured (docs/findings/collection.md)."""


def _footprints(targets: list[sizes.Target]) -> list[int]:
    return [t.footprint for t in targets]


@pytest.mark.parametrize("machine", [MACHINE, BIG_L3], ids=["this", "1GiB-L3"])
def test_the_plateau_is_a_few_points_and_bounded(machine) -> None:
    targets = sizes.footprint_targets(machine, sizes.DEFAULT_DENSITY, machine.memory_bytes)
    llc = machine.last_level_cache().size_bytes
    beyond = [t.footprint for t in targets if t.footprint > llc]
    assert 1 <= len(beyond) <= 3
    assert max(beyond) <= min(sizes.MAX_AUTO_FOOTPRINT, 3 * llc * 1.01)
    assert min(beyond) <= 2 * llc  # the plateau starts right after the LLC
    cached = [t for t in _footprints(targets) if t <= llc]
    ratios = [b / a for a, b in itertools.pairwise(cached)]
    assert max(ratios) <= 2 ** (0.5 * 1.25) * 1.01  # two per doubling through the caches


def test_each_level_has_a_coarse_point_and_rounds_run_in_order() -> None:
    targets = sizes.footprint_targets(BIG_L3, sizes.DEFAULT_DENSITY, BIG_L3.memory_bytes)
    coarse = [t.footprint for t in targets if t.round == sizes.Round.COARSE]
    for cache in BIG_L3.data_caches():
        assert cache.size_bytes in coarse
    assert coarse[-1] == targets[-1].footprint  # the largest is coarse
    assert len(coarse) <= len(targets) / 2
    plan = build_plan(BIG_L3, kernels=["shallow", "stream.triad"])
    rounds = [p.round for p in plan.points]
    assert rounds == sorted(rounds)
    assert {p.benchmark for p in plan.points if p.round == sizes.Round.COARSE} == {
        "shallow",
        "stream.triad",
    }
    rects = [p for p in plan.points if p.round == sizes.Round.RECTANGLES]
    assert rects and all(len(set(p.shape)) > 1 for p in rects)


def test_rectangles_thin_out_with_the_footprint() -> None:
    targets = sizes.footprint_targets(BIG_L3, sizes.DEFAULT_DENSITY, BIG_L3.memory_bytes)
    l2, llc = 2 * MIB, GIB
    private = [t for t in targets if t.footprint <= 1.5 * l2]
    shared = [t for t in targets if 1.5 * l2 < t.footprint <= llc]
    beyond = [t for t in targets if t.footprint > llc]
    assert sum(t.rectangles for t in private) == len(private) // 2
    assert sum(t.rectangles for t in shared) == len(shared) // 4
    assert beyond and not any(t.rectangles for t in beyond)
    assert not any(t.rectangles for t in sizes.footprint_targets(
        BIG_L3, sizes.QUICK_DENSITY, BIG_L3.memory_bytes
    ))  # fmt: skip


def test_a_1gib_l3_plan_fits_4gib_and_its_coarse_round_the_budget() -> None:
    """Issue 33: a described 1 GiB-L3 machine plans at most 4 GiB and 5 minutes (the
    default budget), and the first pass over the coarse points of every level and every
    benchmark fits in it on a VM like the project's."""
    plan = build_plan(BIG_L3)
    assert max(p.footprint_bytes for p in plan.points) <= 4 * GIB
    assert plan.time_budget(None) == DEFAULT_TIME_BUDGET <= 300
    first_pass = estimate.estimate(plan, plan.points, VM_HOST)
    assert first_pass.by_round[sizes.Round.COARSE] <= DEFAULT_TIME_BUDGET
    found = estimate.estimate(plan, list(plan.points) * plan.passes, VM_HOST)
    assert found.total_s > DEFAULT_TIME_BUDGET  # so the budget, not the plan, bounds it
    assert 0 < found.within(DEFAULT_TIME_BUDGET) < 1
    explicit = build_plan(BIG_L3, kernels=["shallow"], sizes_spec="64x64")
    assert explicit.time_budget(None) is None and explicit.time_budget(7.0) == 7.0


def test_estimate_grows_with_footprint_and_counts_both_steps() -> None:
    plan = build_plan(MACHINE, kernels=["shallow"])
    by_size = sorted(plan.points, key=lambda p: p.footprint_bytes)
    small, large = by_size[0], by_size[-1]
    bench = get_benchmark("shallow")
    step = next(k for k in bench.kernels if k.name == "shallow.step")
    moved = bench.kernel_points(large.shape)["shallow.step"] * step.bytes_per_point(
        "float64", with_write_allocate=True
    )
    # a repetition is a plain step and a step timed loop by loop
    assert estimate.repetition_bytes(bench, large) == pytest.approx(2 * moved, rel=1e-3)
    cheap = estimate.pass_seconds(plan, small, VM_HOST)
    dear = estimate.pass_seconds(plan, large, VM_HOST)
    # the small point is its samples of the target length; the large one its repetitions
    assert plan.samples * plan.sample_time <= cheap < dear
    assert dear >= (plan.samples + 2) * moved / VM_HOST.stream


def test_measured_rates_are_positive_and_finite() -> None:
    rates = estimate.measure_rates(MACHINE)
    assert all(0 < r < math.inf for r in (rates.stream, rates.fresh))


class _Sleeper:
    """A repetition of 40 ms spent asleep: the evidence calls a sleep undisturbed (the
    thread gives its CPU up; it is not taken)."""

    def __init__(self) -> None:
        self.calls = 0

    def run(self, repetitions: int) -> dict[str, float]:
        self.calls += 1
        time.sleep(0.04 * repetitions)
        return {"k": 0.04 * repetitions}

    def checksum(self) -> None:
        return None


def test_one_long_undisturbed_repetition_needs_no_check() -> None:
    # near the target the fastest of three checks decides; far above it one trial does
    near = _Sleeper()
    assert calibrate(near, 0.04) >= 1 and near.calls >= 3
    trials = []
    for _ in range(5):  # a neighbour may delay a wake-up: that trial is checked
        far = _Sleeper()
        assert calibrate(far, 0.005) == 1
        trials.append(far.calls)
        if far.calls == 1:
            break
    assert 1 in trials, trials


def test_dry_run_prints_the_plan_and_creates_nothing(tmp_path: Path) -> None:
    target = tmp_path / "never.sqlite"
    proc = benchdb(
        "collect", "--dry-run", "--kernels", "shallow", "--caches", "48KiB,2MiB,1GiB",
        "--db", f"sqlite:///{target}",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "described caches: L1 48 KiB, L2 2 MiB, L3 1 GiB" in proc.stdout
    assert "estimated" in proc.stdout and "shallow: " in proc.stdout
    assert not target.exists()


def test_dry_run_json_gives_every_shape_and_the_bounds(tmp_path: Path) -> None:
    target = tmp_path / "never.sqlite"
    result = invoke(
        "collect", "--dry-run", "--json", "--kernels", "shallow,stream.triad",
        "--caches", "48KiB,2MiB,1GiB", "--db", f"sqlite:///{target}",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    assert plan["caches"] == [48 * 1024, 2 * MIB, GIB] and plan["caches_described"]
    assert plan["largest_footprint"] <= 4 * GIB
    assert plan["time_budget_s"] == DEFAULT_TIME_BUDGET
    assert sum(b["points"] for b in plan["benchmarks"]) == plan["points"]
    shallow = next(b for b in plan["benchmarks"] if b["benchmark"] == "shallow")
    assert len(shallow["shapes"]) == shallow["points"]
    assert shallow["coarse"] + shallow["dense"] + shallow["rectangles"] == shallow["points"]
    assert plan["estimate_s"] == pytest.approx(sum(plan["estimate_by_round"].values()))
    assert not target.exists()


def test_collect_says_its_estimate_before_it_starts(sqlite_url: str) -> None:
    proc = benchdb(
        "collect", "--kernels", "stream.triad", "--footprints", "16KiB,64KiB",
        "--sample-time", "0.003", "--passes", "1", "--db", sqlite_url,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    line = next(x for x in proc.stderr.splitlines() if "estimated" in x)
    assert "2 point-passes (2 points)" in line and "no time budget" in line


def test_no_point_starts_that_the_estimate_says_would_end_beyond_the_budget(
    sqlite_url: str,
) -> None:
    from benchdb.collectors.sweep import run_sweep

    from benchdb.db.engine import open_database

    plan = build_plan(
        MACHINE, kernels=["stream.triad"], footprints_spec="16KiB,64KiB,256KiB",
        sample_time=0.003, passes=1,
    )  # fmt: skip
    db = open_database(sqlite_url)
    try:
        first = run_sweep(db, plan, time_budget=600, expected=lambda point: 1e6)
        # the first point always runs, so that a run too long for any budget still moves
        assert (first.status, first.measured, first.remaining) == ("interrupted", 1, 2)
        second = run_sweep(db, plan, time_budget=600, expected=lambda point: 0.0)
        assert second.resumed and (second.status, second.measured) == ("complete", 2)
    finally:
        db.close()
