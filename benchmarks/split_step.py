"""Does the distributed step's shape (three compiled ranges, halo copies) slow its loops?

A 1-rank run steps the serial model (``run_steps`` over all phases, periodic
boundary phases); a P-rank run steps :func:`distributed_steps`: the phases in
three ranges with the halo exchanges between them.  2-rank validation runs
have run their loops slower than the populated calibration at the same blocks
while 1-rank runs did not (docs/findings/app-loop-curves.md, "The distributed
step's loops").  This runs, in one process and with no MPI traffic, one block
both ways, alternated ``--rounds`` times: the serial
benchmark's step (what the single-process curves time) and
:class:`benchdb.collectors.app.instep.DistributedStepPoint` (the distributed
step on a 1x1 decomposition, whose exchanges are local halo copies).  It prints each
loop's nanoseconds per point both ways (medians over rounds) and their ratio: a
ratio well above 1 for cu and cv puts the cause in the step's shape, one near 1
puts it in the MPI calls or the second rank.

    python benchmarks/split_step.py --block 35x70 --rounds 5
"""

from __future__ import annotations

import argparse
import statistics

from benchdb.collectors.app.instep import DistributedStepPoint
from benchdb.kernels import get_benchmark

from benchdb.shapes import parse_shape

SECONDS_PER_TRY = 1.0
NS_PER_POINT_GUESS = 10.0  # the whole step, to size the step count


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--block", default="35x70", help="one rank's block MxN")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    block = parse_shape(args.block, 2)
    ways = {
        "serial": get_benchmark("shallow").prepare(block, "float64", 1),
        "split": DistributedStepPoint(block, "float64"),
    }
    points = block[0] * block[1]
    steps = max(10, round(SECONDS_PER_TRY / (NS_PER_POINT_GUESS * 1e-9 * points)))
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in ways}
    for way in ways.values():
        way.run(2)  # warm-up
    for _ in range(args.rounds):
        for name, way in ways.items():
            runs[name].append({k: 1e9 * v / steps / points for k, v in way.run(steps).items()})
    print(f"block {args.block}, {steps} steps per try, {args.rounds} rounds (medians)")
    print("loop            serial ns/pt  split ns/pt  split/serial")
    for kernel in runs["split"][0]:
        serial = statistics.median(r[kernel] for r in runs["serial"])
        split = statistics.median(r[kernel] for r in runs["split"])
        print(f"{kernel:14}  {serial:12.3f}  {split:11.3f}  {split / serial:12.3f}")


if __name__ == "__main__":
    main()
