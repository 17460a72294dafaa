"""Does the memory bandwidth that two busy cores get stay put from second to second?

The application model prices a P-rank run's loops from the populated
(``fullstep:ppnP``) curves: it assumes the bandwidth the ranks share is a
property of the machine.  On a shared host it need not be.  This runs the
STREAM triad (the ``stream.triad`` kernel, numba) on a working set of 4x the
last-level cache, pinned one process per core, in alternating phases: one
process alone, then every process at once (``--procs``, default all cores).
Every ``--interval`` seconds each running process records its bandwidth.

It prints, per phase, the per-process GB/s (median, min, max) and, per cycle,
the ratio together/alone: the share of a lone core's bandwidth that each core
keeps when all are busy.  A ratio that stays put is a machine property the
populated curve captures; one that jumps between values from cycle to cycle
is the host, and a calibration taken in one such spell predicts runs in
another one wrong by the jump.

    python benchmarks/bandwidth_modes.py [--cycles 8] [--phase 5] [--interval 0.25]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import time
from typing import Any

from benchdb.kernels import get_benchmark
from benchdb.kernels.builtin.stream import STREAM_KERNELS

from benchdb.machine import detect_machine

TRIAD = next(k for k in STREAM_KERNELS if k.name == "stream.triad")
BYTES_PER_POINT = TRIAD.bytes_per_point("float64")  # STREAM counting: 24 B


def dram_points() -> int:
    """Triad length whose three arrays span 4x the last-level cache."""
    last = detect_machine().last_level_cache()
    if last is None:
        raise SystemExit("this machine reports no data cache; cannot size the working set")
    return 4 * last.size_bytes // BYTES_PER_POINT


def _worker(
    core: int, n: int, plan: list[bool], phase_s: float, interval: float, barrier: Any, out: Any
) -> None:
    """Pinned to ``core``; in every phase where ``plan`` says so, stream for ``phase_s``
    seconds and record (phase, seconds since start, GB/s) every ``interval``."""
    os.sched_setaffinity(0, {core})
    prepared = get_benchmark("stream.triad").prepare((n,), "float64", 1)
    prepared.run(1)
    probe = prepared.run(3)["stream.triad"] / 3
    reps = max(1, round(interval / probe))
    records = []
    barrier.wait()
    start = time.perf_counter()
    for phase, active in enumerate(plan):
        barrier.wait()
        began = time.perf_counter()
        while active and time.perf_counter() - began < phase_s:
            seconds = prepared.run(reps)["stream.triad"]
            records.append(
                (phase, time.perf_counter() - start, BYTES_PER_POINT * n * reps / seconds / 1e9)
            )
        if not active:
            time.sleep(phase_s)
    out.put((core, records))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=8, help="alone+together pairs")
    parser.add_argument("--phase", type=float, default=5.0, help="seconds per phase")
    parser.add_argument("--interval", type=float, default=0.25, help="seconds per record")
    parser.add_argument("--procs", type=int, default=len(os.sched_getaffinity(0)))
    args = parser.parse_args()
    if args.procs < 2:
        parser.error("--procs: at least 2 cores are needed to compare alone and together")
    cores = sorted(os.sched_getaffinity(0))[: args.procs]
    n = dram_points()
    ctx = mp.get_context("spawn")
    barrier, out = ctx.Barrier(len(cores)), ctx.Queue()
    together = [i % 2 == 1 for i in range(2 * args.cycles)]
    workers = [
        ctx.Process(
            target=_worker,
            args=(
                core,
                n,
                [p or rank == 0 for p in together],
                args.phase,
                args.interval,
                barrier,
                out,
            ),
        )
        for rank, core in enumerate(cores)
    ]
    for w in workers:
        w.start()
    print(
        f"triad, {3 * 8 * n / 2**20:.0f} MiB per process, cores {cores}, "
        f"{args.cycles} cycles of {args.phase:g} s alone + {args.phase:g} s together"
    )
    results = dict(out.get() for _ in workers)
    for w in workers:
        w.join()
    per_phase: dict[int, list[float]] = {}
    for records in results.values():
        for phase, _, gbs in records:
            per_phase.setdefault(phase, []).append(gbs)
    print(
        f"{'cycle':>5s} {'alone GB/s (med min max)':>26s} "
        f"{'together GB/s per proc (med min max)':>38s} {'together/alone':>15s}"
    )
    ratios = []
    for cycle in range(args.cycles):
        alone, both = per_phase[2 * cycle], per_phase[2 * cycle + 1]
        ratio = statistics.median(both) / statistics.median(alone)
        ratios.append(ratio)
        print(
            f"{cycle:5d} {statistics.median(alone):10.2f} {min(alone):7.2f} {max(alone):7.2f}"
            f" {statistics.median(both):18.2f} {min(both):9.2f} {max(both):9.2f}"
            f" {ratio:15.3f}"
        )
    print(
        f"together/alone over the cycles: median {statistics.median(ratios):.3f}, "
        f"min {min(ratios):.3f}, max {max(ratios):.3f}"
    )


if __name__ == "__main__":
    main()
