"""How long a sweep will take, said before it starts (``collect`` and ``collect --dry-run``).

A point's pass costs what :func:`.timing.time_point` does with it: the benchmark's
set-up (allocating and initialising its arrays, and the first, untimed repetition),
a warm-up repetition, the calibration trials and the samples -- each sample at least
the target sample time, or one repetition where a repetition is longer -- plus the
commit.  A repetition moves the benchmark's own traffic (its kernels' loads and
stores per point, :class:`~benchdb.kernels.api.KernelInfo`), so its time is that
traffic over the host's streaming rate; set-up writes the footprint a few times
over at the host's rate of writing fresh memory.  Both rates are read from this
host by :func:`measure_rates`, from arrays beyond its last-level cache where
memory allows, so a plan for a described machine (``--caches``) is timed at this
host's speed.  Programs in another process add their start-up to every sample,
which this estimate does not know: it is a lower bound for them.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from benchdb.machine import MachineInfo

from ..kernels.api import Benchmark
from .plan import Point, SweepPlan
from .sizes import Round
from .timing import CALIBRATION_CHECKS, CALIBRATION_FRACTION, LONG_REPETITION

PROBE_BYTES = (64 * 2**20, 512 * 2**20)
"""The probe's two arrays together: twice the last-level cache, within these bounds."""
SETUP_WRITES = 3.0
"""How many times a benchmark's set-up writes its footprint (the fields, their
temporaries and the old time levels): the shallow model's initial state does about this."""
COMMIT_S = 0.01
"""The commit and bookkeeping of one point's pass."""
UNTIMED_REPETITIONS = 2
"""Set-up's first repetition and the warm-up."""


@dataclass(frozen=True)
class HostRates:
    """The host's rates the estimate assumes, bytes per second."""

    stream: float  # copying between arrays beyond the caches (read + write + write-allocate)
    fresh: float  # writing memory not touched before (page faults included)


@dataclass(frozen=True)
class Estimate:
    """A plan's expected duration, in seconds, by round (:class:`.sizes.Round`)."""

    by_round: dict[Round, float]
    rates: HostRates

    @property
    def total_s(self) -> float:
        return sum(self.by_round.values())

    def within(self, budget: float | None) -> float:
        """The share of the plan's estimated time a budget covers (1 without one)."""
        if budget is None or self.total_s <= 0:
            return 1.0
        return min(1.0, budget / self.total_s)


def measure_rates(machine: MachineInfo) -> HostRates:
    """Time this host writing fresh memory and copying beyond its last-level cache.

    The probe's arrays hold twice ``machine``'s last-level cache (within
    :data:`PROBE_BYTES`); it takes a second at most, and the fastest of three copies
    counts.
    """
    llc = machine.last_level_cache()
    total = int(min(max(2 * (llc.size_bytes if llc else 0), PROBE_BYTES[0]), PROBE_BYTES[1]))
    n = total // 16
    t0 = time.perf_counter()
    a = np.ones(n)
    b = np.zeros(n)
    b[:] = 1.0
    fresh = 16 * n / (time.perf_counter() - t0)
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        np.copyto(b, a)
        best = min(best, time.perf_counter() - t0)
    return HostRates(stream=24 * n / best, fresh=fresh)


def repetition_bytes(bench: Benchmark, point: Point) -> float:
    """Bytes one repetition of ``bench`` moves at ``point``: every kernel it times, each
    once (a shallow repetition is a plain step, timed whole, and a step timed loop by
    loop: its loops' traffic and the step's)."""
    counts = bench.kernel_points(point.shape)
    return sum(
        counts.get(k.name, 0) * k.bytes_per_point(point.precision, with_write_allocate=True)
        for k in bench.kernels
    )


def pass_seconds(plan: SweepPlan, point: Point, rates: HostRates) -> float:
    """The expected time of one pass over ``point`` (see the module docstring)."""
    bench = plan.catalog.get(point.benchmark)
    repetition = repetition_bytes(bench, point) / rates.stream
    sample = max(plan.sample_time, repetition)
    if repetition >= plan.sample_time * LONG_REPETITION:
        calibration = repetition
    elif repetition >= plan.sample_time * CALIBRATION_FRACTION:
        calibration = CALIBRATION_CHECKS * repetition
    else:  # trials grow to a quarter of a sample, then are checked
        calibration = (CALIBRATION_CHECKS + 1) * plan.sample_time * CALIBRATION_FRACTION
    setup = SETUP_WRITES * point.footprint_bytes / rates.fresh
    return COMMIT_S + setup + UNTIMED_REPETITIONS * repetition + calibration + plan.samples * sample


def estimate(plan: SweepPlan, todo: Iterable[Point], rates: HostRates) -> Estimate:
    """The expected time of the point-passes ``todo`` (a point once per pass), by round."""
    by_round: dict[Round, float] = {}
    for point in todo:
        by_round[point.round] = by_round.get(point.round, 0.0) + pass_seconds(plan, point, rates)
    return Estimate(dict(sorted(by_round.items())), rates)
