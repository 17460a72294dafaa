"""Does a long run of the shallow model go at the speed of the sweep's short samples?

The application model predicts a 1-2 s run from curves whose points are the
median of 20 ms samples.  If the host's other tenants interrupt now and then,
a long run pays every interruption while the median of short samples skips
them, and the prediction comes out low.  This measures, in one process and
alternating ``--rounds`` times at one grid: the sweep's samples (``time_point``,
its defaults), and one long run of about ``--seconds`` with the same per-loop
clocks, both pinned to one CPU as the sweep is; with ``--db`` also a 1-rank
``benchdb app run`` job of the same length right after.  All in seconds per
step, summed over the loops.

    python benchmarks/sample_length.py --grid 62 --rounds 5 --db sqlite:////tmp/len.sqlite
"""

from __future__ import annotations

import argparse
import statistics

from app_validation import SWEEP_SAMPLES, loop_sums  # a sibling script
from benchdb.collectors.app.collect import AppRunRequest, run_app
from benchdb.collectors.pinning import pinned
from benchdb.collectors.plan import DEFAULT_SAMPLE_TIME
from benchdb.collectors.timing import time_point
from benchdb.kernels import get_benchmark

from benchdb.app.decomposition import Decomposition
from benchdb.db.app_runs import app_run_summary
from benchdb.db.engine import open_database


def long_run(prepared, steps: int) -> float:  # type: ignore[no-untyped-def]
    """Seconds per step, summed over the loops, of one run of ``steps`` clocked steps
    (``run`` also takes as many un-clocked steps first, and corrects for the clock reads)."""
    return loop_sums({k: [t] for k, t in prepared.run(steps).items()})[0] / steps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grid", type=int, default=62, help="square global grid side")
    ap.add_argument("--seconds", type=float, default=1.5, help="clocked seconds of a long run")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--db", help="also run a 1-rank app job per round, stored here")
    args = ap.parse_args()
    grid = (args.grid, args.grid)
    prepared = get_benchmark("shallow").prepare(grid, "float64", 1)
    probe = long_run(prepared, 20)
    steps = max(20, int(args.seconds / probe))
    db = open_database(args.db) if args.db else None
    print(f"grid {args.grid}x{args.grid}, long runs of {steps} steps; microseconds per step")
    print("short median  short mean  long  long/median" + ("  app job  app/median" if db else ""))
    for _ in range(args.rounds):
        with pinned(1):  # as the sweep; the app job's rank is bound to a core too
            short = loop_sums(time_point(prepared, DEFAULT_SAMPLE_TIME, SWEEP_SAMPLES).samples)
            long = long_run(prepared, steps)
        med, mean = statistics.median(short), statistics.fmean(short)
        line = f"{med * 1e6:12.1f}  {mean * 1e6:10.1f}  {long * 1e6:5.1f}  {long / med:11.3f}"
        if db is not None:
            run = app_run_summary(
                db, run_app(db, AppRunRequest(grid, Decomposition(1, 1), steps, tags=("probe",)))
            )
            app = sum(run["loops_s"].values()) / steps
            line += f"  {app * 1e6:7.1f}  {app / med:10.3f}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
