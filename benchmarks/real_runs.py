"""Runs whose points are timed for real, with an injected slowdown: what
``regression_detection.py`` measures the detectors on, and
``tests/regress/test_real.py`` checks them with.

:class:`RealRuns` times real kernels (the collectors' calibration and record
code), optionally doing more work than the stored shape says (the injected
slowdown: the first extent times ``work``, stored under the nominal shape).
The same point of several runs is sampled round-robin (each round visits
every run once, in an order shuffled per round with a fixed seed: a strict
ABC... order aliases with periodic load -- another process's time slices
-- and can put it on the same run round after round), so that the shared
machine's load falls on all runs alike, and samples are short (0.5 ms,
many of them): a long sample spans several scheduler slices and measures the
CPU share the neighbours leave, while most short samples run unpreempted and
their median is the kernel's time (docs/findings/regression-detection.md).
A test of the statistics must not hinge on when the neighbours' jobs happen
to run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from benchdb.collectors.plan import Point
from benchdb.collectors.record import measurement_rows
from benchdb.collectors.timing import PointTiming, calibrate
from benchdb.kernels import get_benchmark

from benchdb.db.engine import Database
from benchdb.db.point_rows import add_points
from benchdb.db.repo import register_kernel
from benchdb.db.runs import finish_run, start_run


class RealRuns:
    """Runs whose points are timed for real: round-robin across the runs (``measure``),
    or one run after another in passes, as ``benchdb collect`` takes them (``collect``)."""

    def __init__(self, db: Database, sample_time: float = 5e-4, samples: int = 21) -> None:
        self.db, self.sample_time, self.samples = db, sample_time, samples
        self.rng = np.random.default_rng(23)

    def start(self, tag: str, config: Mapping[str, Any] | None = None) -> int:
        """A kernel collection; ``config`` its settings (runs of other settings are no
        replicates of each other, :mod:`benchdb.regress.replicates`)."""
        return start_run(self.db, kind="kernels", config=dict(config or {}), tags=[tag]).id

    def finish(self, run_id: int) -> None:
        finish_run(self.db, run_id, "complete")

    def _prepare(self, benchmark: str, shape: tuple[int, ...], work: float) -> tuple[Any, int]:
        """The point on ``work`` times its first extent, warmed up, and its repetitions."""
        real = (round(shape[0] * work), *shape[1:])
        prepared = get_benchmark(benchmark).prepare(real, "float64", 1)
        prepared.run(1)  # warm-up
        return prepared, calibrate(prepared, self.sample_time)

    def _store(
        self,
        run_id: int,
        benchmark: str,
        shape: tuple[int, ...],
        timing: PointTiming,
    ) -> None:
        bench = get_benchmark(benchmark)
        point = Point(benchmark, shape, "float64", 1, bench.footprint_bytes(shape, "float64"))
        with self.db.session() as s:
            kernels = {k.name: (register_kernel(s, k).id, k) for k in bench.kernels}
            add_points(
                s,
                measurement_rows(
                    run_id, point, bench.kernel_points(shape), timing, "none", kernels
                ),
            )

    def measure(self, benchmark: str, shape: tuple[int, ...], runs: Mapping[int, float]) -> None:
        """Time ``benchmark`` at ``shape`` for each ``{run_id: work}``, samples interleaved."""
        prepared = {run_id: self._prepare(benchmark, shape, work) for run_id, work in runs.items()}
        samples: dict[int, dict[str, list[float]]] = {r: {} for r in runs}
        order = list(prepared)
        for _ in range(self.samples):
            for i in self.rng.permutation(len(order)):
                run_id = order[i]
                p, reps = prepared[run_id]
                for kernel, seconds in p.run(reps).items():
                    samples[run_id].setdefault(kernel, []).append(seconds / reps)
        for run_id, (p, reps) in prepared.items():
            timing = PointTiming(reps, samples[run_id], float(p.checksum()))
            self._store(run_id, benchmark, shape, timing)

    def collect(
        self,
        run_id: int,
        points: Sequence[tuple[str, tuple[int, ...]]],
        work: float,
        passes: int = 3,
    ) -> None:
        """Time all ``points`` of one run as ``benchdb collect`` does: ``passes`` sweeps over
        them (every other one in reverse order), ``samples / passes`` samples per point each,
        so that a point's samples come from moments a sweep apart."""
        prepared = [self._prepare(bench, shape, work) for bench, shape in points]
        samples: list[dict[str, list[float]]] = [{} for _ in points]
        for i in range(passes):
            order = range(len(points)) if i % 2 == 0 else reversed(range(len(points)))
            for j in order:
                p, reps = prepared[j]
                for _ in range(max(1, self.samples // passes)):
                    for kernel, seconds in p.run(reps).items():
                        samples[j].setdefault(kernel, []).append(seconds / reps)
        for (bench, shape), (p, reps), timed in zip(points, prepared, samples, strict=True):
            self._store(run_id, bench, shape, PointTiming(reps, timed, float(p.checksum())))
