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
        # five clean samples, plus one for each the operating system showed disturbed
        assert len(samples) == len(timing.evidence) == min(5 + timing.retaken, 15)
        assert min(samples) > 0
        # one sample (repetitions x time per repetition) lasts about the target
        assert max(samples) * timing.repetitions >= 0.25 * 0.01
    # 64x the work per repetition needs far fewer repetitions per sample
    assert small.repetitions > 8 * large.repetitions


class _Disturbed:
    """A prepared point taking 1 us per repetition, whose ``disturbed``-th run is
    descheduled for 5 ms (another process's burst on a shared machine)."""

    footprint_bytes = 8

    def __init__(self, disturbed: int) -> None:
        self.calls, self.disturbed = 0, disturbed

    def run(self, repetitions: int) -> dict[str, float]:
        import time

        self.calls += 1
        seconds = 1e-6 * repetitions + (5e-3 if self.calls == self.disturbed else 0.0)
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            pass
        return {"k": seconds}

    def checksum(self) -> float | None:
        return None


def test_one_disturbed_calibration_trial_does_not_shrink_the_repetitions() -> None:
    from benchdb.collectors.timing import calibrate

    undisturbed = calibrate(_Disturbed(disturbed=0), 2e-3)
    for call in range(1, 8):  # whichever trial the burst hits
        assert calibrate(_Disturbed(disturbed=call), 2e-3) >= 0.5 * undisturbed, call
