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
  removes (measured: docs/findings/regression-detection.md).  A single
  undisturbed repetition :data:`LONG_REPETITION` times the target is not
  checked: only a check four times faster could ask for a second repetition,
  and on the largest points each check costs a whole repetition.
* At least five samples are taken; every one is kept, in seconds *per
  repetition*, per kernel (the shallow benchmark reports each of its loops).
* Each sample and each calibration trial carries what the operating system saw
  while it ran (:mod:`benchdb.evidence`).  One that lost its core to another task is
  disturbed: it is kept and marked, and another is taken in its place, until
  the point has its samples clean or :data:`RETAKES_PER_SAMPLE` more per sample
  have been tried.  Calibration counts only its undisturbed trials.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from benchdb.evidence import Evidence

from ..kernels.api import Prepared, SelfTimed
from .probes import ChildProbe, Probe

CALIBRATION_FRACTION = 0.25  # stop calibrating once a trial lasts this share of the target
MAX_GROWTH = 100  # a calibration trial is at most this many times the previous one
CALIBRATION_CHECKS = 3  # the final calibration trial is timed this often; the fastest counts
LONG_REPETITION = 4  # one undisturbed repetition this many times the target is a sample: no check
RETAKES_PER_SAMPLE = 2  # a pass takes at most samples * (1 + this) samples to get its clean ones


@dataclass(frozen=True)
class PointTiming:
    """Samples (seconds per repetition) of every kernel a benchmark timed at one point.

    ``evidence`` holds, in the order taken, what the operating system saw during
    each sample (shared by every kernel the sample timed); empty where none was
    read.  ``wanted``: the clean samples the pass asked for; 0 with no evidence.
    ``unpaired``: per sample, True where it is one side of an A/B pair (``benchdb
    ab``) whose other side was disturbed: it is set aside with the disturbed ones, so
    that both sides' kept samples pair by index.
    """

    repetitions: int
    samples: dict[str, list[float]]
    checksum: float | None  # None: the kernel reports none
    evidence: tuple[Evidence, ...] = ()
    wanted: int = 0
    unpaired: tuple[bool, ...] = ()

    @property
    def retaken(self) -> int:
        """Samples set aside as disturbed (each was taken again, within the bound)."""
        return sum(e.disturbed for e in self.evidence)


def probe_for(prepared: Prepared) -> Probe:
    """The probe that reads the evidence around ``prepared``'s samples: of this process, or
    of the program's child process."""
    return ChildProbe(prepared.last_schedstat) if isinstance(prepared, SelfTimed) else Probe()


def take_sample(
    prepared: Prepared, repetitions: int, probe: Probe
) -> tuple[dict[str, float], Evidence]:
    """One sample: seconds per repetition by kernel, and what the operating system saw."""
    times, seen = _measure(prepared, repetitions, probe)
    return {kernel: float(s) / repetitions for kernel, s in times.items()}, seen


def _elapsed(prepared: Prepared, repetitions: int, probe: Probe) -> tuple[float, bool]:
    """Seconds ``repetitions`` repetitions took -- the wall clock around them, or what
    a program in another process reports (its start-up and set-up are no sample) --
    and whether that trial was disturbed."""
    _, evidence = _measure(prepared, repetitions, probe)
    timed = evidence.wall_s if evidence.timed_s is None else evidence.timed_s
    return timed, evidence.disturbed


def _measure(
    prepared: Prepared, repetitions: int, probe: Probe
) -> tuple[dict[str, float], Evidence]:
    """One run of ``repetitions`` repetitions: the times it reports and its evidence,
    which for a program in another process names the part its own timers cover."""
    times, evidence = probe.measure(lambda: prepared.run(repetitions))
    if isinstance(prepared, SelfTimed):
        evidence = replace(evidence, timed_s=prepared.reported_seconds(times))
    return times, evidence


def _checked(
    prepared: Prepared, repetitions: int, first: tuple[float, bool], probe: Probe
) -> float:
    """The fastest of :data:`CALIBRATION_CHECKS` undisturbed trials (``first`` counts as
    one), trying at most as many again; the fastest of all if none ran undisturbed."""
    trials = [first]
    for _ in range(2 * CALIBRATION_CHECKS - 1):
        if sum(not disturbed for _, disturbed in trials) >= CALIBRATION_CHECKS:
            break
        trials.append(_elapsed(prepared, repetitions, probe))
    clean = [t for t, disturbed in trials if not disturbed]
    return min(clean or [t for t, _ in trials])


def calibrate(prepared: Prepared, sample_time: float, probe: Probe | None = None) -> int:
    """Repetitions for one sample to last about ``sample_time`` seconds (at least one).

    ``probe``: one already open for this point; else one is opened for the calibration.
    """
    if probe is None:
        with probe_for(prepared) as own:
            return calibrate(prepared, sample_time, own)
    repetitions = 1
    while True:
        trial = _elapsed(prepared, repetitions, probe)
        wall = trial[0]
        if repetitions == 1 and not trial[1] and wall >= sample_time * LONG_REPETITION:
            return 1
        if wall >= sample_time * CALIBRATION_FRACTION:
            wall = _checked(prepared, repetitions, trial, probe)
            if wall >= sample_time * CALIBRATION_FRACTION:  # else that trial was disturbed
                return max(1, math.ceil(repetitions * sample_time / wall))
        growth = MAX_GROWTH if wall <= 0 else sample_time * CALIBRATION_FRACTION / wall * 1.5
        repetitions = max(repetitions + 1, math.ceil(repetitions * min(MAX_GROWTH, growth)))


def time_point(prepared: Prepared, sample_time: float, samples: int) -> PointTiming:
    """Checksum, warm up, calibrate, then take samples of the calibrated length until
    ``samples`` of them ran undisturbed, or ``samples * (1 + RETAKES_PER_SAMPLE)`` ran."""
    checksum = prepared.checksum()
    if not isinstance(prepared, SelfTimed):
        prepared.run(1)  # warm-up: excluded from every sample
    per_kernel: dict[str, list[float]] = {}
    evidence: list[Evidence] = []
    with probe_for(prepared) as probe:
        repetitions = calibrate(prepared, sample_time, probe)
        clean = 0
        while clean < samples and len(evidence) < samples * (1 + RETAKES_PER_SAMPLE):
            times, seen = take_sample(prepared, repetitions, probe)
            for kernel, seconds in times.items():
                per_kernel.setdefault(kernel, []).append(seconds)
            evidence.append(seen)
            clean += not seen.disturbed
    return PointTiming(repetitions, per_kernel, checksum, tuple(evidence), samples)
