"""Timing one prepared point (docs/design.md "Measurement method").

* JIT compilation and first touch are excluded: ``prepare()`` compiles and
  touches the data, and one more untimed repetition follows (warm-up).  A
  user's program warms up inside each of its runs instead
  (:class:`~benchdb.kernels.api.SelfTimed`).
* The checksum is read before any timed repetition, so every pass over a
  point gives the same one whatever repetitions it calibrated.
* Repetitions are calibrated so that one sample lasts at least the target
  sample time (20 ms by default), long against the clock and against the
  ~0.2 us numba call that starts it; the repetition loop itself runs in
  compiled code (``Prepared.run``).  The trial the repetitions are
  extrapolated from is timed :data:`CALIBRATION_CHECKS` times and the
  fastest counts: one trial slowed by another process (descheduled for a few
  milliseconds) would otherwise give far too few repetitions, and every
  sample of the point would carry the per-call overhead that the
  repetitions are there to amortise -- a systematic error no median
  removes (measured: docs/findings/regression-detection.md).
* At least five samples are taken; every one is kept, in seconds *per
  repetition*, per kernel (the shallow benchmark reports each of its loops).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from ..kernels.api import Prepared, SelfTimed

CALIBRATION_FRACTION = 0.25  # stop calibrating once a trial lasts this share of the target
MAX_GROWTH = 100  # a calibration trial is at most this many times the previous one
CALIBRATION_CHECKS = 3  # the final calibration trial is timed this often; the fastest counts


@dataclass(frozen=True)
class PointTiming:
    """Samples (seconds per repetition) of every kernel a benchmark timed at one point."""

    repetitions: int
    samples: dict[str, list[float]]
    checksum: float | None  # None: the kernel reports none


def _elapsed(prepared: Prepared, repetitions: int) -> float:
    """Seconds ``repetitions`` repetitions took: the wall clock around them, or what
    a program in another process reports (its start-up and set-up are no sample)."""
    if isinstance(prepared, SelfTimed):
        return prepared.reported_seconds(prepared.run(repetitions))
    t0 = time.perf_counter()
    prepared.run(repetitions)
    return time.perf_counter() - t0


def calibrate(prepared: Prepared, sample_time: float) -> int:
    """Repetitions for one sample to last about ``sample_time`` seconds (at least one)."""
    repetitions = 1
    while True:
        wall = _elapsed(prepared, repetitions)
        if wall >= sample_time * CALIBRATION_FRACTION:
            for _ in range(CALIBRATION_CHECKS - 1):
                wall = min(wall, _elapsed(prepared, repetitions))
            if wall >= sample_time * CALIBRATION_FRACTION:  # else that trial was disturbed
                return max(1, math.ceil(repetitions * sample_time / wall))
        growth = MAX_GROWTH if wall <= 0 else sample_time * CALIBRATION_FRACTION / wall * 1.5
        repetitions = max(repetitions + 1, math.ceil(repetitions * min(MAX_GROWTH, growth)))


def time_point(prepared: Prepared, sample_time: float, samples: int) -> PointTiming:
    """Checksum, warm up, calibrate, then take ``samples`` samples of the calibrated length."""
    checksum = prepared.checksum()
    if not isinstance(prepared, SelfTimed):
        prepared.run(1)  # warm-up: excluded from every sample
    repetitions = calibrate(prepared, sample_time)
    per_kernel: dict[str, list[float]] = {}
    for _ in range(samples):
        for kernel, seconds in prepared.run(repetitions).items():
            per_kernel.setdefault(kernel, []).append(float(seconds) / repetitions)
    return PointTiming(repetitions, per_kernel, checksum)
