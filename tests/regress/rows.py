"""Runs written through the ORM for the regression tests.

``add_run`` stores given samples (synthetic sets with known answers);
:class:`RealRuns` times real kernels (the collectors' calibration and record
code), optionally doing more work than the stored shape says (the injected
slowdown: the first extent times ``work``, stored under the nominal shape).
The same point of several runs is sampled round-robin (ABAB...), so that the
shared machine's load falls on all runs alike, and samples are short (0.5 ms,
many of them): on the oversubscribed 2-core VM a 20 ms sample spans several
scheduler slices and measures the CPU share the neighbours leave (stream.triad
at 2000 points: ~0.7 us per repetition in 100-repetition samples, ~2 us in
10000-repetition ones, load average 6), while most short samples run
unpreempted and their median is the kernel's time.  A test of the statistics
must not hinge on when the neighbours' jobs happen to run.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from benchdb.collectors.plan import Point
from benchdb.collectors.record import measurement_rows
from benchdb.collectors.timing import PointTiming, calibrate
from benchdb.kernels import get_benchmark, kernel_info

from benchdb.db.engine import Database
from benchdb.db.models import Measurement
from benchdb.db.repo import register_kernel
from benchdb.environment import EnvironmentInfo, detect_environment
from benchdb.machine import MachineInfo, detect_machine
from benchdb.query import shape_key
from benchdb.runs import finish_run, start_run
from benchdb.stats import summarize


def other_machine() -> MachineInfo:
    """This machine with another CPU model: a different fingerprint."""
    return dataclasses.replace(detect_machine(), cpu_model="Other CPU 9000", hostname="elsewhere")


def other_environment(**changes: str) -> EnvironmentInfo:
    return dataclasses.replace(detect_environment(), **changes)


def add_run(
    db: Database,
    points: Mapping[tuple[str, tuple[int, ...]], Sequence[float]],
    *,
    tags: Sequence[str] = (),
    machine: MachineInfo | None = None,
    environment: EnvironmentInfo | None = None,
) -> int:
    """A complete run holding ``{(kernel, shape): samples}`` (seconds per repetition)."""
    run = start_run(
        db, kind="kernels", config={}, tags=list(tags), machine=machine, environment=environment
    )
    with db.session() as s:
        for (kernel, shape), samples in points.items():
            info = kernel_info(kernel)
            st = summarize(samples)
            s.add(
                Measurement(
                    run_id=run.id,
                    kernel_id=register_kernel(s, info).id,
                    shape=list(shape),
                    shape_key=shape_key(shape),
                    points=int(sum(shape)),
                    footprint_bytes=8 * int(sum(shape)) * info.arrays,
                    repetitions=10,
                    samples=list(samples),
                    t_min=st.t_min,
                    t_median=st.t_median,
                    t_iqr=st.t_iqr,
                    t_cv=st.t_cv,
                    flags=["noisy"] if st.noisy else [],
                )
            )
    finish_run(db, run.id, "complete")
    return run.id


class RealRuns:
    """Runs whose points are timed for real, round-robin across the runs."""

    def __init__(self, db: Database, sample_time: float = 5e-4, samples: int = 21) -> None:
        self.db, self.sample_time, self.samples = db, sample_time, samples

    def start(self, tag: str) -> int:
        return start_run(self.db, kind="kernels", config={}, tags=[tag]).id

    def finish(self, run_id: int) -> None:
        finish_run(self.db, run_id, "complete")

    def measure(self, benchmark: str, shape: tuple[int, ...], runs: Mapping[int, float]) -> None:
        """Time ``benchmark`` at ``shape`` for each ``{run_id: work}``, samples interleaved."""
        bench = get_benchmark(benchmark)
        prepared, reps = {}, {}
        for run_id, work in runs.items():
            real = (round(shape[0] * work), *shape[1:])
            prepared[run_id] = bench.prepare(real, "float64", 1)
            prepared[run_id].run(1)  # warm-up
            reps[run_id] = calibrate(prepared[run_id], self.sample_time)
        samples: dict[int, dict[str, list[float]]] = {r: {} for r in runs}
        for _ in range(self.samples):
            for run_id, p in prepared.items():
                for kernel, seconds in p.run(reps[run_id]).items():
                    samples[run_id].setdefault(kernel, []).append(seconds / reps[run_id])
        point = Point(benchmark, shape, "float64", 1, bench.footprint_bytes(shape, "float64"))
        with self.db.session() as s:
            kernels = {k.name: (register_kernel(s, k).id, k) for k in bench.kernels}
            for run_id, p in prepared.items():
                timing = PointTiming(reps[run_id], samples[run_id], float(p.checksum()))
                s.add_all(
                    measurement_rows(
                        run_id, point, bench.kernel_points(shape), timing, "none", kernels
                    )
                )
