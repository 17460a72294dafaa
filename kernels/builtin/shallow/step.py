"""Compiled shallow-water time step with per-loop timers inside the time-stepping loop.

Paper 003 (section V) timed each array-update loop with timers around it
*inside* the time-stepping loop, so each loop runs with the other twelve
arrays competing for cache as in the real model; a loop repeated on its own
keeps its arrays hot and over-predicts once the 13-array footprint passes a
cache level (docs/design.md, "Measurement method").  Here the step is a sequence
of 13 *phases* (the ten loops of Table I, two boundary updates, the copies)
run by ``phase(k, ...)``; the compiled driver :func:`run_steps` runs S steps
either

* per phase: it reads the time-stamp counter between consecutive phases (one
  ~15 ns read per phase boundary, no return to Python) and accumulates the
  ticks of each phase, or
* plain: the same phases with no clock inside the step, which gives the
  whole-step time (``shallow.step``).

A clock read costs a few ticks that land in the interval it closes; the
per-phase totals have that cost (``clock.read_overhead_ticks``) subtracted,
so that the ten loops plus copies plus boundary updates add up to the
uninstrumented step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import prange

from ...api import Shape, SizedBenchmark, Verification
from ...clock import read_overhead_ticks, seconds, tick
from ...jit import serial, set_threads, variants
from ...verify import compare
from .model import (
    STAGGER,
    ShallowState,
    StepConstants,
    halo,
    initial_state,
    mass,
    reference_run,
    step_constants,
)

PHASES = (
    "cu",
    "cv",
    "z",
    "h",
    "boundary",
    "unew",
    "vnew",
    "pnew",
    "boundary",
    "uold",
    "vold",
    "pold",
    "copy",
)
N_PHASES = len(PHASES)
(CU, CV, Z, H, PERIODIC_CVZH, UNEW, VNEW, PNEW, PERIODIC_NEW, UOLD, VOLD, POLD, COPY) = range(
    N_PHASES
)


_halo = serial(halo)


@serial
def _periodic(a, offset_i, offset_j):
    """Periodic continuation of one field; see :func:`.model.periodic`."""
    hi, si = _halo(offset_i, a.shape[0] - 1)
    hj, sj = _halo(offset_j, a.shape[1] - 1)
    for j in range(a.shape[1]):
        a[hi, j] = a[si, j]
    for i in range(a.shape[0]):
        a[i, hj] = a[i, sj]


# Offsets as literals so that numba sees constants.
_U, _V, _Z, _P = STAGGER["u"], STAGGER["v"], STAGGER["z"], STAGGER["p"]


def _phase(k, s, c):
    """Phase ``k`` of one time step (``PHASES[k]``), written once with ``prange``.

    Compiled twice (serial and ``parallel=True``); :func:`run_steps` picks one
    and runs any range of phases, so the distributed model
    (``benchdb.collectors.app``) times the very same compiled loops.
    """
    m = s.p.shape[0] - 1
    n = s.p.shape[1] - 1
    half = s.p.dtype.type(0.5)
    quarter = s.p.dtype.type(0.25)
    u, v, p, cu, cv, z, h = s.u, s.v, s.p, s.cu, s.cv, s.z, s.h
    if k == CU:
        for j in prange(n):
            for i in range(m):
                cu[i + 1, j] = half * (p[i + 1, j] + p[i, j]) * u[i + 1, j]
    elif k == CV:
        for j in prange(n):
            for i in range(m):
                cv[i, j + 1] = half * (p[i, j + 1] + p[i, j]) * v[i, j + 1]
    elif k == Z:
        for j in prange(n):
            for i in range(m):
                z[i + 1, j + 1] = (
                    c.fsdx * (v[i + 1, j + 1] - v[i, j + 1])
                    - c.fsdy * (u[i + 1, j + 1] - u[i + 1, j])
                ) / (p[i, j] + p[i + 1, j] + p[i + 1, j + 1] + p[i, j + 1])
    elif k == H:
        for j in prange(n):
            for i in range(m):
                h[i, j] = p[i, j] + quarter * (
                    u[i + 1, j] * u[i + 1, j]
                    + u[i, j] * u[i, j]
                    + v[i, j + 1] * v[i, j + 1]
                    + v[i, j] * v[i, j]
                )
    elif k == PERIODIC_CVZH:
        _periodic(cu, _U[0], _U[1])
        _periodic(cv, _V[0], _V[1])
        _periodic(z, _Z[0], _Z[1])
        _periodic(h, _P[0], _P[1])
    elif k == UNEW:
        unew, uold = s.unew, s.uold
        for j in prange(n):
            for i in range(m):
                unew[i + 1, j] = (
                    uold[i + 1, j]
                    + c.tdts8
                    * (z[i + 1, j + 1] + z[i + 1, j])
                    * (cv[i + 1, j + 1] + cv[i, j + 1] + cv[i, j] + cv[i + 1, j])
                    - c.tdtsdx * (h[i + 1, j] - h[i, j])
                )
    elif k == VNEW:
        vnew, vold = s.vnew, s.vold
        for j in prange(n):
            for i in range(m):
                vnew[i, j + 1] = (
                    vold[i, j + 1]
                    - c.tdts8
                    * (z[i + 1, j + 1] + z[i, j + 1])
                    * (cu[i + 1, j + 1] + cu[i, j + 1] + cu[i, j] + cu[i + 1, j])
                    - c.tdtsdy * (h[i, j + 1] - h[i, j])
                )
    elif k == PNEW:
        pnew, pold = s.pnew, s.pold
        for j in prange(n):
            for i in range(m):
                pnew[i, j] = (
                    pold[i, j]
                    - c.tdtsdx * (cu[i + 1, j] - cu[i, j])
                    - c.tdtsdy * (cv[i, j + 1] - cv[i, j])
                )
    elif k == PERIODIC_NEW:
        _periodic(s.unew, _U[0], _U[1])
        _periodic(s.vnew, _V[0], _V[1])
        _periodic(s.pnew, _P[0], _P[1])
    elif k <= POLD:
        # Robert-Asselin time filter over the full array:
        # old = cur + alpha (new - 2 cur + old)
        if k == UOLD:
            old, cur, new = s.uold, u, s.unew
        elif k == VOLD:
            old, cur, new = s.vold, v, s.vnew
        else:
            old, cur, new = s.pold, p, s.pnew
        two = p.dtype.type(2.0)
        for j in prange(n + 1):
            for i in range(m + 1):
                old[i, j] = cur[i, j] + c.alpha * (new[i, j] - two * cur[i, j] + old[i, j])
    else:
        # the three copies u = unew, v = vnew, p = pnew, one array after another
        for which in range(3):
            if which == 0:
                dst, src = u, s.unew
            elif which == 1:
                dst, src = v, s.vnew
            else:
                dst, src = p, s.pnew
            for j in prange(n + 1):
                for i in range(m + 1):
                    dst[i, j] = src[i, j]


PHASE = variants(_phase)
_PHASE_SERIAL, _PHASE_PARALLEL = PHASE.serial, PHASE.parallel


def run_steps(parallel, s, c, steps, first, stop, per_phase, ticks):
    """``steps`` repetitions of phases ``first .. stop-1``; elapsed ticks of them all.

    A whole step is ``first=0, stop=N_PHASES``; the distributed model runs a
    step in three ranges so it can leave compiled code for its halo exchanges.
    With ``per_phase`` the clock is also read after every phase and each
    phase's ticks are added to ``ticks[phase]``; without it the step has no
    clock inside.  One driver for both keeps the machine code of the steps
    the same.  ``parallel`` picks the ``prange`` compilation of the phases; the
    driver is compiled for the one it is given only (a serial sweep never waits
    for the parallel compilation, the longer of the two).
    """
    phase = _PHASE_PARALLEL if parallel else _PHASE_SERIAL
    return drive(phase, s, c, steps, first, stop, per_phase, ticks)


@serial
def drive(phase, s, c, steps, first, stop, per_phase, ticks):
    """:func:`run_steps` compiled, for compiled callers: ``phase`` is the compiled
    phase function to run (``PHASE.serial`` or ``PHASE.parallel``)."""
    start = tick()
    for _ in range(steps):
        if per_phase:
            t0 = tick()
            for k in range(first, stop):
                phase(k, s, c)
                t1 = tick()
                ticks[k] += t1 - t0
                t0 = t1
        else:
            for k in range(first, stop):
                phase(k, s, c)
    return tick() - start


@dataclass
class ShallowPrepared:
    """The model on one shape, precision and thread count (``api.Prepared``).

    ``steps_done`` counts every time step applied since the initial
    conditions (the untimed first, forward step included).
    """

    state: ShallowState
    constants: StepConstants
    threads: int
    points: int
    footprint_bytes: int
    steps_done: int = 0

    def advance(
        self, steps: int, constants: StepConstants | None = None, ticks: np.ndarray | None = None
    ) -> int:
        """``steps`` time steps, timed per phase into ``ticks`` if given; elapsed ticks."""
        set_threads(self.threads)
        per_phase = ticks is not None
        total = run_steps(
            self.threads > 1,
            self.state,
            constants or self.constants,
            steps,
            0,
            N_PHASES,
            per_phase,
            ticks if per_phase else np.zeros(N_PHASES, dtype=np.int64),
        )
        self.steps_done += steps
        return total

    def run(self, repetitions: int) -> dict[str, float]:
        """``repetitions`` plain steps, then ``repetitions`` timed steps.

        Returns seconds summed over the repetitions: ``shallow.step`` from
        the plain steps, ``shallow.<loop>``, ``shallow.boundary`` and
        ``shallow.copy`` from the timed ones.  The state advances by
        2 x ``repetitions`` steps.
        """
        step_ticks = self.advance(repetitions)
        ticks = np.zeros(N_PHASES, dtype=np.int64)
        self.advance(repetitions, ticks=ticks)
        corrected = np.maximum(ticks - repetitions * read_overhead_ticks(), 0.0)
        times = dict.fromkeys((f"shallow.{name}" for name in PHASES), 0.0)
        for name, t in zip(PHASES, corrected, strict=True):
            times[f"shallow.{name}"] += seconds(t)
        times["shallow.step"] = seconds(step_ticks)
        return times

    def mass(self) -> float:
        return mass(self.state)

    def checksum(self) -> float:
        return state_checksum(self.state)


def state_checksum(s: ShallowState) -> float:
    """Sum of u, v and p: what the collectors store to check a point's result."""
    return float(sum(np.sum(a, dtype=np.float64) for a in (s.u, s.v, s.p)))


def prepare(bench: SizedBenchmark, shape: Shape, precision: str, threads: int) -> ShallowPrepared:
    """Initial conditions, then the model's first (forward, unfiltered) step.

    That step compiles the driver and first-touches every array, so every
    timed step is a regular leapfrog step with the Robert-Asselin filter.
    """
    prepared = ShallowPrepared(
        state=initial_state(shape, precision),
        constants=step_constants(precision, first=False),
        threads=threads,
        points=bench.points(shape),
        footprint_bytes=bench.footprint_bytes(shape, precision),
    )
    prepared.advance(1, step_constants(precision, first=True))
    return prepared


def verify(bench: SizedBenchmark, precision: str, threads: int) -> Verification:
    """The compiled step against the numpy reference step at ``bench.check_shape``:
    all 13 fields after the forward step and four leapfrog steps."""
    shape = bench.check_shape
    prepared = prepare(bench, shape, precision, threads)
    prepared.run(2)
    expected = reference_run(shape, precision, prepared.steps_done)
    return compare(bench.name, shape, precision, threads, prepared.state, expected)
