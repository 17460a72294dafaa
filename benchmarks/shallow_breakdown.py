"""Do the shallow-water per-loop times add up to the whole time step?

Runs the shallow benchmark at an L1-, an L3- and a DRAM-resident footprint
(paper 003 eq. 9: (M+1)(N+1) x 13 x itemsize), sizes derived from the caches
this machine reports in sysfs, and prints per phase seconds per step, the sum
of the ten loops + boundary updates + copies, the whole step timed without
per-loop clocks, and their ratio.  Targets: within 10% at L1,
within 5% at L3 and in DRAM.

    python benchmarks/shallow_breakdown.py [--precision float64] [--seconds 0.5]
"""

from __future__ import annotations

import argparse
import math
import statistics

from benchdb.kernels import get_benchmark
from benchdb.kernels.builtin.shallow import SHALLOW_ARRAYS
from benchdb.kernels.geometry import itemsize

from benchdb.machine import read_caches_sysfs

TARGETS = {"L1": 0.10, "L3": 0.05, "DRAM": 0.05}


def level_sizes() -> dict[str, int]:
    """Data-cache capacity by level name (L1, L2, L3), from sysfs."""
    return {f"L{c.level}": c.size_bytes for c in read_caches_sysfs() if c.type != "Instruction"}


def square_side(footprint: float, precision: str) -> int:
    """M such that an M x M model has about ``footprint`` bytes."""
    return max(2, int(math.sqrt(footprint / (SHALLOW_ARRAYS * itemsize(precision)))) - 1)


def sizes(precision: str) -> dict[str, int]:
    caches = level_sizes()
    last = max(caches, key=lambda name: int(name[1:]))
    return {
        "L1": square_side(0.6 * caches["L1"], precision),
        "L3": square_side(math.sqrt(caches["L2"] * caches[last]), precision),
        "DRAM": square_side(4 * caches[last], precision),
    }


def measure(m: int, precision: str, seconds: float, samples: int) -> dict[str, float]:
    """Median over samples of each phase's seconds per step."""
    prepared = get_benchmark("shallow").prepare((m, m), precision, 1)
    probe = prepared.run(2)
    steps = max(2, int(seconds / max(probe["shallow.step"] / 2, 1e-9)))
    runs = [prepared.run(steps) for _ in range(samples)]
    return {k: statistics.median(r[k] for r in runs) / steps for k in runs[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--precision", default="float64", choices=("float64", "float32"))
    parser.add_argument("--seconds", type=float, default=0.3, help="per sample")
    parser.add_argument("--samples", type=int, default=5)
    args = parser.parse_args()
    for level, m in sizes(args.precision).items():
        bench = get_benchmark("shallow")
        footprint = bench.footprint_bytes((m, m), args.precision)
        t = measure(m, args.precision, args.seconds, args.samples)
        parts = {k: v for k, v in t.items() if k != "shallow.step"}
        total, step = sum(parts.values()), t["shallow.step"]
        error = total / step - 1
        verdict = "ok" if abs(error) <= TARGETS[level] else "MISSED"
        print(f"{level}: M=N={m}, footprint {footprint / 2**20:.3f} MiB, {args.precision}")
        for name, value in parts.items():
            print(f"  {name:18s} {value * 1e6:12.3f} us/step  {value / step:6.1%}")
        print(f"  {'sum of parts':18s} {total * 1e6:12.3f} us/step")
        print(f"  {'whole step':18s} {step * 1e6:12.3f} us/step")
        print(f"  sum/step - 1 = {error:+.2%} (target +-{TARGETS[level]:.0%}: {verdict})")


if __name__ == "__main__":
    main()
