"""Calibrated, repeated, collective timing of one benchmark point.

Every rank calls :func:`measure` together.  ``run(reps)`` executes the
compiled loop ``reps`` times and returns this rank's elapsed seconds (0 for a
rank that only waits), optionally followed by further per-rank timings (e.g.
the part of a halo exchange spent inside MPI).  Repetitions grow until the
slowest rank's time reaches ``min_time`` in the lesser of two trials (one
descheduled trial must not fix the repetitions; the calibration doubles as
warm-up), then ``samples`` samples are taken, each started by a barrier.  A
sample is the slowest rank's time (the job waits for it) per repetition,
divided by ``divisor`` (2 for a ping-pong: one way is half the round trip).

Every rank reads the operating system's evidence around each sample
(:mod:`benchdb.collectors.probes`), as a collector does around a kernel's.  A
sample is as disturbed as the most disturbed rank that took part in it (one rank
off its core holds up its partner); the ranks agree on that at once, so all of
them retake it together, until ``samples`` clean ones are in or
:data:`~benchdb.collectors.timing.RETAKES_PER_SAMPLE` more per sample were
tried.  A rank that only waits (``run`` returned 0) takes no part.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from mpi4py import MPI

from benchdb.evidence import (
    LOST_FRACTION,
    Evidence,
    kept_and_set_aside,
    lost_fraction,
    most_disturbed,
    to_columns,
)
from benchdb.verdicts import Flag

from ..probes import Probe
from ..timing import RETAKES_PER_SAMPLE

MAX_REPS = 1 << 22
DISTURBED = Flag.DISTURBED  # fewer clean samples than asked for (as a collector flags it)

Runner = Callable[[int], float | Sequence[float]]


@dataclass(frozen=True)
class Timed:
    """A point's samples (the clean ones; every one where none is clean) with their
    evidence, and those set aside as disturbed (``t_s`` and their evidence, as a
    measurement stores them: :func:`benchdb.evidence.to_columns`)."""

    repetitions: int
    samples: list[float]
    extra: list[list[float]]  # per further timing returned by ``run``, its samples
    evidence: dict[str, list[Any]] = field(default_factory=dict)
    set_aside: dict[str, list[Any]] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)


def _slowest(comm: MPI.Comm, run: Runner, reps: int) -> np.ndarray:
    comm.Barrier()
    mine = np.atleast_1d(np.asarray(run(reps), dtype=float))
    out = np.empty_like(mine)
    comm.Allreduce(mine, out, op=MPI.MAX)
    return out


def _sample(comm: MPI.Comm, run: Runner, reps: int, probe: Probe) -> tuple[np.ndarray, Evidence]:
    """One sample: the slowest rank's timings, and this rank's evidence (no loss where
    it took no part)."""
    comm.Barrier()
    result, evidence = probe.measure(lambda: run(reps))
    mine = np.atleast_1d(np.asarray(result, dtype=float))
    if mine[0] <= 0:
        evidence = replace(evidence, lost_s=0.0)
    out = np.empty_like(mine)
    comm.Allreduce(mine, out, op=MPI.MAX)
    return out, evidence


def measure(
    comm: MPI.Comm, run: Runner, *, samples: int, min_time: float, divisor: float = 1.0
) -> Timed:
    run(1)  # warm-up: first touch, connection set-up
    reps = 1
    while True:
        t = min(_slowest(comm, run, reps)[0], _slowest(comm, run, reps)[0])
        if t >= min_time or reps >= MAX_REPS:
            break
        grow = min_time / max(t, 1e-9) * 1.25
        reps = min(MAX_REPS, max(reps * 2, math.ceil(reps * grow)))
    taken, mine = [], []
    clean = 0
    with Probe() as probe:
        while clean < samples and len(taken) < samples * (1 + RETAKES_PER_SAMPLE):
            times, evidence = _sample(comm, run, reps, probe)
            taken.append(times)
            mine.append(evidence)
            clean += comm.allreduce(lost_fraction(evidence), op=MPI.MAX) <= LOST_FRACTION
    rows = np.array(taken) / reps / divisor
    lock_step = [most_disturbed(ranks) for ranks in zip(*comm.allgather(mine), strict=True)]
    keep, aside = kept_and_set_aside([not e.disturbed for e in lock_step])
    return Timed(
        repetitions=reps,
        samples=rows[keep, 0].tolist(),
        extra=[rows[keep, i].tolist() for i in range(1, rows.shape[1])],
        evidence=to_columns([lock_step[i] for i in keep]),
        set_aside=(
            {"t_s": rows[aside, 0].tolist(), **to_columns([lock_step[i] for i in aside])}
            if aside
            else {}
        ),
        flags=[DISTURBED] if clean < samples else [],
    )
