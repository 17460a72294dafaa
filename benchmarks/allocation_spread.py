"""Does a fresh allocation of the same grid run at another speed?

The sweep, the near calibration, the host probe and every app run allocate the
shallow model's thirteen arrays anew.  Their physical pages decide which sets
of a physically indexed cache (such as L2) the arrays share, so two allocations of
one grid may miss differently while each keeps its own speed for its life.  If
that is so, a curve point measured once is one draw of the allocation, and a
prediction from it is off by the spread between draws however quiet the host.

This prepares ``--allocations`` independent copies of one grid in one process
(all alive at once, so none reuses another's pages), then measures each of them
``--rounds`` times as the sweep does (pinned to one CPU, 15 samples of 20 ms,
median; see ``app_validation.sweep_median``), interleaved, so that the host's
drift falls on every allocation alike.  It prints each allocation's rounds and
median, and compares the spread *between* the allocations' medians with the
spread *within* an allocation (median over allocations of its rounds' range):

    python benchmarks/allocation_spread.py --grid 100 --allocations 6 --rounds 5
"""

from __future__ import annotations

import argparse
import statistics

from app_validation import sweep_median  # a sibling script
from benchdb.kernels import get_benchmark


def rel_range(values: list[float]) -> float:
    """(max - min) / median."""
    return (max(values) - min(values)) / statistics.median(values)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grid", type=int, default=100, help="square grid side")
    ap.add_argument("--allocations", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    bench = get_benchmark("shallow")
    allocs = [bench.prepare((args.grid, args.grid), "float64", 1) for _ in range(args.allocations)]
    us: list[list[float]] = [[] for _ in allocs]
    for _ in range(args.rounds):
        for a, prepared in enumerate(allocs):
            us[a].append(1e6 * sweep_median(prepared))
    print(f"grid {args.grid}x{args.grid}: microseconds per step, loops summed")
    for a, vals in enumerate(us):
        rounds = " ".join(f"{v:6.1f}" for v in vals)
        print(f"allocation {a}: {rounds}   median {statistics.median(vals):6.1f}")
    medians = [statistics.median(v) for v in us]
    within = statistics.median(rel_range(v) for v in us)
    print(
        f"between allocations (range of medians / median): {100 * rel_range(medians):.1f} %; "
        f"within one allocation (median range of its rounds): {100 * within:.1f} %"
    )


if __name__ == "__main__":
    main()
