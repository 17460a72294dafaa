"""Does an L1-sized point's time follow where its arrays are in memory?

``benchdb ab`` moves a trial's arrays to virtual addresses drawn from the trial's
seed, the same on both sides (``collectors/ab/array_layout.py``).  This script
measures what that controls and what it does not, in one process pinned to one
CPU (address randomization is irrelevant: the addresses are drawn).  The point
(default ``inject.scale`` of ``benchmarks/ab/inject.py`` at 1024 elements, 16 KiB)
is prepared once and its arrays moved ``--placements`` times with
``relocate(prepared, seed)`` (seeds 0, 1, ...), every placement kept mapped; then
in each of ``--rounds`` rounds every placement is timed (``--samples`` samples,
median), the placements in a shuffled order:

* without ``--remap`` the placements keep their virtual *and* physical pages: a
  placement slow in every round is slow for where it is, not for when it ran;
* with ``--remap`` every round after the first frees all placements and moves the
  arrays again with the same seeds: the same virtual addresses on fresh physical
  pages, as the two sides of a trial of ``benchdb ab`` have them.

Printed: the table (a row per placement, a column per round, ns per repetition);
per placement the slowest round over the fastest; how many placements are more
than 20 % slower than the fastest placement in every round (slow for their
address) and in some rounds only.

    python benchmarks/array_addresses.py [--remap] [--placements 32] [--rounds 4]
"""

from __future__ import annotations

import argparse
import gc
from pathlib import Path

import numpy as np
from benchdb.collectors.ab.array_layout import relocate
from benchdb.collectors.pinning import pinned, start_numba_threads
from benchdb.collectors.plan import load_user_code
from benchdb.collectors.timing import calibrate, probe_for, take_sample

PLUGIN = Path(__file__).parent / "ab" / "inject.py"
SLOW = 1.2
"""A placement this much slower than the round's fastest counts as slow."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernel", default="inject.scale")
    parser.add_argument("--shape", default="1024", help="e.g. 1024 or 32x32")
    parser.add_argument("--placements", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--samples", type=int, default=5, help="samples per placement a round")
    parser.add_argument("--remap", action="store_true", help="fresh physical pages each round")
    args = parser.parse_args()
    shape = tuple(int(x) for x in args.shape.split("x"))
    start_numba_threads()
    bench = load_user_code([], [str(PLUGIN)]).get(args.kernel)
    rng = np.random.default_rng(0)
    table = np.zeros((args.placements, args.rounds))
    with pinned(1, 0):
        prepared = bench.prepare(shape, "float64", 1)
        original = prepared.state

        def placed(seed: int) -> tuple:
            prepared.state = original
            relocate(prepared, seed)
            return prepared.state

        states = [placed(seed) for seed in range(args.placements)]
        with probe_for(prepared) as probe:
            repetitions = calibrate(prepared, 0.005, probe)
            for r in range(args.rounds):
                if args.remap and r:
                    prepared.state, states = original, []
                    gc.collect()  # unmap the last round's arrays before mapping them again
                    states = [placed(seed) for seed in range(args.placements)]
                for p in rng.permutation(args.placements):
                    prepared.state = states[p]
                    prepared.run(1)
                    times = [
                        next(iter(take_sample(prepared, repetitions, probe)[0].values()))
                        for _ in range(args.samples)
                    ]
                    table[p, r] = np.median(times) * 1e9
    print(
        f"{args.kernel} at {args.shape}, {'remapped' if args.remap else 'kept'} each round: "
        f"ns per repetition, median of {args.samples} samples"
    )
    for p, row in enumerate(table):
        print(f"  {p:3d}  " + " ".join(f"{x:7.1f}" for x in row))
    rounds = table.max(axis=1) / table.min(axis=1)
    slow = table > SLOW * table.min(axis=0)
    print(
        f"per placement, slowest round / fastest: median {np.median(rounds):.2f}, "
        f"largest {rounds.max():.2f}"
    )
    print(
        f"placements >{SLOW - 1:.0%} slower than the fastest: in every round "
        f"{int(slow.all(axis=1).sum())}, in some rounds only "
        f"{int((slow.any(axis=1) & ~slow.all(axis=1)).sum())}, of {args.placements}"
    )


if __name__ == "__main__":
    main()
