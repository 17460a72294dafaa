"""A clock readable from compiled code: the CPU time-stamp counter.

Paper 003 put ``MPI_Wtime`` timers around each loop inside the time-stepping
loop.  From numba, returning to Python around every loop would cost ~0.2 us a
call and swamp small problems, so the drivers read the time-stamp counter
themselves through the LLVM intrinsic ``llvm.readcyclecounter`` (``rdtsc`` on
x86-64, ~15 ns).  Ticks become seconds with a rate calibrated once against
``time.perf_counter``; this assumes an invariant TSC (``constant_tsc`` and
``nonstop_tsc`` in ``/proc/cpuinfo``), which every x86-64 server of the last
decade has.

The rate's error goes whole into every time a process measures, so each end of
the calibration is a counter read bracketed by two ``perf_counter`` reads, the
narrowest of a burst: a process preempted between two reads (both cores busy)
widens that bracket and is skipped, instead of moving the rate (unbracketed
reads were up to 1 % off: docs/findings/collection.md).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cache

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from .jit import serial


@intrinsic
def _readcyclecounter(typingctx):
    def codegen(context, builder, signature, args):
        fnty = ir.FunctionType(ir.IntType(64), [])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.readcyclecounter")
        return builder.call(fn, [])

    return types.int64(), codegen


@serial
def tick() -> int:
    """The time-stamp counter; LLVM does not move memory accesses across it."""
    return _readcyclecounter()


@serial
def _back_to_back(out: np.ndarray) -> None:
    for k in range(out.size):
        t0 = tick()
        out[k] = tick() - t0


CALIBRATION_S = 0.05
BRACKET_TRIES = 25


@dataclass(frozen=True)
class ClockPair:
    """A counter read and the ``perf_counter`` interval around it."""

    ticks: int
    seconds: float  # middle of the bracket
    width: float  # the bracket's length: the uncertainty of ``seconds``


def clock_pair(tries: int = BRACKET_TRIES) -> ClockPair:
    """The narrowest of ``tries`` bracketed counter reads."""
    pairs = []
    for _ in range(tries):
        a = time.perf_counter()
        c = tick()
        b = time.perf_counter()
        pairs.append(ClockPair(c, (a + b) / 2, b - a))
    return min(pairs, key=lambda p: p.width)


def rate_between(start: ClockPair, end: ClockPair) -> tuple[float, float]:
    """Ticks per second from ``start`` to ``end``, and its relative error bound: each
    read happened somewhere inside its bracket, at most half a width from the middle."""
    span = end.seconds - start.seconds
    return (end.ticks - start.ticks) / span, (start.width + end.width) / 2 / span


@cache
def tick_rate() -> float:
    """Ticks per second, calibrated once per process over CALIBRATION_S."""
    tick()  # compile before calibrating
    start = clock_pair()
    time.sleep(CALIBRATION_S)
    rate, _ = rate_between(start, clock_pair())
    if rate <= 0:
        raise RuntimeError("llvm.readcyclecounter does not count on this CPU")
    return rate


@cache
def read_overhead_ticks() -> float:
    """Ticks one clock read adds to an interval (median of back-to-back reads)."""
    samples = np.empty(20_000, dtype=np.int64)
    _back_to_back(samples)
    return float(np.median(samples))


def seconds(ticks: float) -> float:
    return ticks / tick_rate()
