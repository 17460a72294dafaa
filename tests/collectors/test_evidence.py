"""Evidence with every sample: a sample that lost its core is set aside and retaken.

The disturbance here is real: a second process, pinned to the measuring thread's
CPU, busy while the chosen sample runs.  The scheduler shares the CPU between
them, and the operating system's accounting is what the collector must read.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from benchdb.collectors.pinning import pinned
from benchdb.collectors.plan import Point
from benchdb.collectors.probes import ChildProbe, Probe
from benchdb.collectors.record import DISTURBED, add_pass, measurement_rows
from benchdb.collectors.timing import PointTiming, time_point
from benchdb.kernels import get_benchmark
from benchdb.kernels.api import ChildSchedstat
from benchdb.kernels.program import run_command

from benchdb.evidence import (
    LOST_FRACTION,
    Evidence,
    from_columns,
    lost_fraction,
    lost_share,
    to_columns,
)
from benchdb.predict.noise import pass_medians

pytestmark = [
    pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs CPU pinning (Linux)"),
    pytest.mark.alone,  # a test beside these would be the co-runner they look for
]

BUSY = """
import time
print("busy", flush=True)
end = time.time() + 2
while time.time() < end:
    pass
"""


def _work(cpu_seconds: float) -> float:
    """Spin for ``cpu_seconds`` of this thread's CPU time (a fixed amount of work); the
    wall time it took, which is longer when another task held the CPU meanwhile."""
    t0, c0 = time.perf_counter(), time.thread_time()
    while time.thread_time() - c0 < cpu_seconds:
        pass
    return time.perf_counter() - t0


class _SharedCore:
    """A prepared point doing 30 ms of work per run, timed by the wall clock; during its
    runs numbered ``hits`` (from 1) another process, on the same CPU, spins too."""

    footprint_bytes = 8

    def __init__(self, hits: set[int]) -> None:
        self.calls, self.hits = 0, hits

    def run(self, repetitions: int) -> dict[str, float]:
        self.calls += 1
        if self.calls not in self.hits:
            return {"k": _work(0.03) * repetitions}
        # the co-runner inherits this process's affinity: one CPU, shared with us
        other = subprocess.Popen([sys.executable, "-c", BUSY], stdout=subprocess.PIPE, text=True)
        try:
            assert other.stdout is not None and other.stdout.readline() == "busy\n"
            return {"k": _work(0.03) * repetitions}
        finally:
            other.kill()
            other.wait()

    def checksum(self) -> float | None:
        return None


def test_the_probe_sees_a_process_sharing_the_core() -> None:
    with pinned(1), Probe() as probe:
        _, quiet = probe.measure(lambda: _work(0.03))
        _, shared = probe.measure(lambda: _SharedCore(hits={1}).run(1))
    assert shared.lost_s > 0.2 * shared.wall_s  # the co-runner took its share
    assert shared.nivcsw > 0 and shared.disturbed
    assert quiet.wall_s >= 0.03 and quiet.cpu_s > 0


def test_a_disturbed_sample_is_set_aside_and_taken_again() -> None:
    # Run 1 warms up, runs 2-4 calibrate (a 30 ms run is one repetition of a 20 ms
    # sample), so runs 7 and 8 are the third and fourth samples; should calibration
    # retry a trial that this busy machine disturbed, at least run 8 still is a sample.
    with pinned(1):
        timing = time_point(_SharedCore(hits={7, 8}), 0.02, 5)
    [samples] = timing.samples.values()
    assert len(samples) == len(timing.evidence)
    disturbed = [t for t, e in zip(samples, timing.evidence, strict=True) if e.disturbed]
    clean = [t for t, e in zip(samples, timing.evidence, strict=True) if not e.disturbed]
    assert len(clean) == 5 and timing.retaken == len(disturbed) >= 1
    assert max(disturbed) > 1.2 * max(clean)  # the co-runner's samples were slow ones


def _program_alone_and_shared(
    probe: ChildProbe, program: Callable[[], None]
) -> tuple[Evidence, Evidence]:
    """The evidence of ``program`` run alone on CPU 1, then beside a busy process there."""
    with pinned(1), probe:
        _, alone = probe.measure(program)
        other = subprocess.Popen([sys.executable, "-c", BUSY], stdout=subprocess.PIPE, text=True)
        try:
            assert other.stdout is not None and other.stdout.readline() == "busy\n"
            _, shared = probe.measure(program)
        finally:
            other.kill()
            other.wait()
    return alone, shared


PROGRAM = [sys.executable, "-c", "print(sum(range(3_000_000)))"]


def test_a_program_in_a_child_process_is_judged_by_its_run_queue_delay() -> None:
    seen: list[ChildSchedstat | None] = []

    def program() -> None:
        seen.append(run_command(PROGRAM, Path.cwd(), os.environ, 60).schedstat)

    alone, shared = _program_alone_and_shared(ChildProbe(lambda: seen[-1]), program)
    assert all(s is not None and s.on_cpu_s > 0 for s in seen)  # read before it was reaped
    assert alone.wait_s is not None and alone.wait_s < 0.2 * alone.wall_s
    assert shared.wait_s is not None and shared.wait_s > 0.2 * shared.wall_s
    assert shared.lost_s >= shared.wait_s and shared.disturbed


def test_without_its_schedstat_a_program_is_judged_by_its_rusage() -> None:
    def program() -> None:
        subprocess.run(PROGRAM, check=True, stdout=subprocess.DEVNULL)

    alone, shared = _program_alone_and_shared(ChildProbe(lambda: None), program)
    assert alone.cpu_s > 0 and alone.wait_s is None
    assert shared.lost_s > 0.2 * shared.wall_s and shared.disturbed


def test_a_child_whose_main_thread_ran_little_of_its_cpu_time_is_judged_by_its_rusage() -> None:
    """A script that starts the real program: its own delay says nothing of the work."""
    probe = ChildProbe(lambda: ChildSchedstat(on_cpu_s=0.001, run_delay_s=0.0))
    alone, shared = _program_alone_and_shared(
        probe, lambda: subprocess.run(PROGRAM, check=True, stdout=subprocess.DEVNULL)
    )
    assert alone.wait_s is None and shared.wait_s is None and shared.disturbed


def test_a_program_sample_is_judged_against_the_time_it_reports() -> None:
    """A 3 ms step in a 200 ms process that lost a 2 ms slice lost 1 % of the run but
    two thirds of the sample: kept against the run, set aside against the sample."""
    run = Evidence(wall_s=0.2, cpu_s=0.198, wait_s=None, nivcsw=1, steal_s=0.0, lost_s=0.002)
    assert not run.disturbed  # 1.0 % of the whole run: at the threshold, kept
    step = replace(run, timed_s=0.003)
    assert step.disturbed and lost_fraction(step) == pytest.approx(2 / 3)
    assert lost_share(to_columns([step, step])) == pytest.approx(2 / 3, rel=1e-4)


# ------------------------------------------------------------------ pooling the evidence

TRIAD = get_benchmark("stream.triad")
INFO = TRIAD.kernels[0]
KERNELS = {INFO.name: (7, INFO)}
POINT = Point("stream.triad", (100,), "float64", 1, 2400)


def _ev(lost: float) -> Evidence:
    return Evidence(wall_s=0.02, cpu_s=0.02 - lost, wait_s=lost, nivcsw=int(lost > 0),
                    steal_s=0.0, lost_s=lost)  # fmt: skip


CLEAN, HIT = _ev(0.0), _ev(0.01)  # HIT lost half its wall time


def _timing(samples: list[float], evidence: list[Evidence], wanted: int = 3) -> PointTiming:
    return PointTiming(10, {INFO.name: samples}, 3.0, tuple(evidence), wanted)


def test_statistics_come_from_the_clean_samples_and_the_rest_is_kept_aside() -> None:
    assert HIT.disturbed and not CLEAN.disturbed and LOST_FRACTION < 0.5
    timing = _timing([1.0, 9.0, 1.1, 1.2], [CLEAN, HIT, CLEAN, CLEAN])
    [row] = measurement_rows(1, POINT, {INFO.name: 100}, timing, "cpus:0", KERNELS)
    assert row.samples == [1.0, 1.1, 1.2] and row.t_median == 1.1
    assert from_columns(row.evidence, 3) == [CLEAN] * 3
    assert row.set_aside == {"t_s": [9.0], "pass": [0], **to_columns([HIT])}
    assert row.set_aside["lost_s"] == [0.01] and lost_share(row.evidence) == 0.0
    assert DISTURBED not in row.flags and row.valid


def test_a_point_short_of_clean_samples_is_flagged_and_a_later_pass_can_clear_it() -> None:
    first = _timing([1.0, 9.0, 8.0], [CLEAN, HIT, HIT])
    [row] = measurement_rows(1, POINT, {INFO.name: 100}, first, "cpus:0", KERNELS)
    assert row.samples == [1.0] and DISTURBED in row.flags and row.valid
    add_pass(row, _timing([1.2, 1.1], [CLEAN, CLEAN]), KERNELS)
    assert row.samples == [1.0, 1.2, 1.1] and row.t_median == 1.1
    assert DISTURBED not in row.flags and row.set_aside["t_s"] == [9.0, 8.0]


def test_a_point_with_no_clean_sample_keeps_them_all_flagged() -> None:
    timing = _timing([9.0, 8.0, 7.0], [HIT, HIT, HIT])
    [row] = measurement_rows(1, POINT, {INFO.name: 100}, timing, "cpus:0", KERNELS)
    assert row.samples == [9.0, 8.0, 7.0] and row.set_aside == {}
    assert DISTURBED in row.flags and row.t_median == 8.0


def test_samples_without_evidence_count_as_clean() -> None:
    """A distributed step timed over MPI reads no evidence; rows from before it had none."""
    timing = PointTiming(10, {INFO.name: [1.0, 1.1, 1.2]}, 3.0)
    [row] = measurement_rows(1, POINT, {INFO.name: 100}, timing, "cpus:0", KERNELS)
    assert row.samples == [1.0, 1.1, 1.2] and row.evidence == {}
    assert row.flags == []


def test_each_pass_keeps_its_own_clean_samples_and_their_medians_stay_apart() -> None:
    """A pass left short of clean samples holds fewer of them: the repeat noise still
    compares pass with pass (``pass_counts``), not equal slices across them."""
    first = _timing([1.0, 1.0, 1.0], [CLEAN] * 3)
    [row] = measurement_rows(1, POINT, {INFO.name: 100}, first, "cpus:0", KERNELS)
    add_pass(row, _timing([2.0, 9.0, 2.0, 9.0], [CLEAN, HIT, CLEAN, HIT]), KERNELS)
    add_pass(row, _timing([3.0, 3.0, 3.0], [CLEAN] * 3), KERNELS)
    assert row.samples == [1.0] * 3 + [2.0] * 2 + [3.0] * 3 and row.pass_counts == [3, 2, 3]
    assert row.set_aside["pass"] == [1, 1]
    assert pass_medians({"samples": row.samples, "passes": 3, "pass_counts": row.pass_counts}) == [
        1.0,
        2.0,
        3.0,
    ]
    # rows collected before pass_counts: equal shares
    assert pass_medians({"samples": [1.0, 1.0, 2.0, 2.0], "passes": 2}) == [1.0, 2.0]


def test_stored_evidence_is_one_list_per_field_and_reads_back() -> None:
    """Each field's name once per row, seconds to 0.1 us; rows from before evidence
    (``[]``) and samples without it read back as None."""
    shared = Evidence(0.0200001234, 0.0100000987, 0.01, 3, None, 0.01, 0.005)
    stored = to_columns([CLEAN, shared, None])
    assert set(stored) == {"wall_s", "cpu_s", "wait_s", "nivcsw", "steal_s", "lost_s",
                           "others_busy_s", "timed_s"}  # fmt: skip
    assert stored["wall_s"] == [0.02, 0.0200001, None] and stored["nivcsw"] == [0, 3, None]
    assert from_columns(stored, 3)[0] == CLEAN and from_columns(stored, 3)[2] is None
    assert from_columns([], 2) == [None, None] and to_columns([None, None]) == {}
    assert lost_share([]) is None and lost_share(stored) == pytest.approx(0.25, rel=1e-4)
