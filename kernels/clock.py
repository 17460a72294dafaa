"""A clock readable from compiled code: the CPU time-stamp counter.

Paper 003 put ``MPI_Wtime`` timers around each loop inside the time-stepping
loop.  From numba, returning to Python around every loop would cost ~0.2 us a
call and swamp small problems, so the drivers read the time-stamp counter
themselves through the LLVM intrinsic ``llvm.readcyclecounter`` (``rdtsc`` on
x86-64, ~15 ns).  Ticks become seconds with a rate calibrated once against
``time.perf_counter``; this assumes an invariant TSC (``constant_tsc`` and
``nonstop_tsc`` in ``/proc/cpuinfo``), which every x86-64 server of the last
decade has.
"""

from __future__ import annotations

import time
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


@cache
def tick_rate() -> float:
    """Ticks per second, calibrated once over ~50 ms against ``time.perf_counter``."""
    tick()  # compile before calibrating
    rates = []
    for _ in range(3):
        c0, t0 = tick(), time.perf_counter()
        time.sleep(0.015)
        c1, t1 = tick(), time.perf_counter()
        rates.append((c1 - c0) / (t1 - t0))
    rate = float(np.median(rates))
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
