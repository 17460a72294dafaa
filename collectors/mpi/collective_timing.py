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
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from mpi4py import MPI

MAX_REPS = 1 << 22

Runner = Callable[[int], float | Sequence[float]]


@dataclass(frozen=True)
class Timed:
    repetitions: int
    samples: list[float]
    extra: list[list[float]]  # per further timing returned by ``run``, its samples


def _slowest(comm: MPI.Comm, run: Runner, reps: int) -> np.ndarray:
    comm.Barrier()
    mine = np.atleast_1d(np.asarray(run(reps), dtype=float))
    out = np.empty_like(mine)
    comm.Allreduce(mine, out, op=MPI.MAX)
    return out


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
    rows = np.array([_slowest(comm, run, reps) for _ in range(samples)]) / reps / divisor
    return Timed(
        repetitions=reps,
        samples=rows[:, 0].tolist(),
        extra=[rows[:, i].tolist() for i in range(1, rows.shape[1])],
    )
