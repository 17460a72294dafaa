"""Timing a prepared point: warm-up, calibrated repetitions, every sample kept."""

from __future__ import annotations

from benchdb.collectors.timing import time_point
from benchdb.kernels import get_benchmark


def test_samples_are_calibrated_per_repetition_and_kept() -> None:
    bench = get_benchmark("stream.triad")
    small = time_point(bench.prepare((2_000,), "float64", 1), 0.01, 5)
    large = time_point(bench.prepare((128_000,), "float64", 1), 0.01, 5)
    for timing in (small, large):
        [samples] = timing.samples.values()
        assert len(samples) == 5 and min(samples) > 0
        # one sample (repetitions x time per repetition) lasts about the target
        assert max(samples) * timing.repetitions >= 0.25 * 0.01
    # 64x the work per repetition needs far fewer repetitions per sample
    assert small.repetitions > 8 * large.repetitions
