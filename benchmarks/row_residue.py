"""How much does a loop's rate depend on its exact row length, modulo a cache line?

A lookup interpolates between measured shapes; it cannot know that a block whose
rows are a whole number of SIMD vectors runs faster than its neighbours one
element away.  This measures how large that effect is: ``--bases`` random shapes
(log-uniform in size, rows up to about 16x longer or shorter than the square's,
seeded), each also with rows 1 .. ``--width - 1`` elements longer, all in one run
of two passes interleaved (:meth:`SweepPlan.schedule`), so that a shape and its
siblings are measured seconds apart.

Per kernel and base, the log rates of the ``--width`` siblings are detrended
(a straight line in the row extent: the footprint grows with it) and filed under
the row extent modulo ``--width`` (the shape's extent along the contiguous axis;
shallow stores ``m + 1`` elements per row, so its residue ``r`` is the storage's
``r + 1``).  It prints per residue
the mean and median deviation in % over kernels x bases, then per kernel the mean
over the bases (loops whose rows start and end differently differ: shallow's time
filter runs over the whole stored row, its other loops over the inner points), then
per base the mean over the kernels, beside the floor (|second pass / first - 1|).
Last, what a lookup that never measured the row cannot reach: the |deviation| over
kernels x bases x residues (an interpolation between row lengths misses that much,
even with the trend exact), and what is left of it once each kernel's mean pattern,
learned from the *other* bases, is taken out (what a residue layer could reach at
best).  A held-out error judged against the floor cannot be expected below these.

    python benchmarks/row_residue.py [--family shallow] [--bases 12] [--width 8]
        [--seed 7] [--db sqlite:////tmp/residue.sqlite]

Bad input (an unknown family, a family without a row axis, a width below 2, no
bases, a database that already holds data) is refused in one line, exit status 2,
before anything is written.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from benchdb.collectors.plan import build_plan, select_benchmarks
from benchdb.collectors.sweep import detect_context, run_sweep, verify_plan
from benchdb.kernels.api import Benchmark
from heldout import LOOPS
from heldout_common import pass_times, summary

from benchdb.db.engine import open_database
from benchdb.errors import UserError
from benchdb.machine import detect_machine
from benchdb.predict.basis import rate_basis
from benchdb.shapes import shape_key

SIZE_RANGE = (30, 900)  # geometric mean extent of a base: L1 to beyond the LLC of shallow
MAX_LOG_ASPECT = 1.4  # rows up to e^1.4 (about 4x) longer / shorter than the square's


@dataclass(frozen=True)
class Setup:
    """Everything checked before anything is written."""

    url: str
    bench: Benchmark
    kernels: tuple[str, ...]
    bases: tuple[tuple[int, ...], ...]
    width: int

    def siblings(self, base: tuple[int, ...]) -> list[tuple[int, ...]]:
        axis = self.bench.geometry.contiguous_axis % self.bench.ndim
        return [tuple(n + d * (i == axis) for i, n in enumerate(base)) for d in range(self.width)]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", default="shallow", help="a 2-D kernel family (shallow)")
    parser.add_argument("--bases", type=int, default=12, help="random base shapes")
    parser.add_argument("--width", type=int, default=8, help="row lengths per base (residues)")
    parser.add_argument("--seed", type=int, default=7, help="seed of the base shapes")
    parser.add_argument("--db", help="a new database (default: one in a temp dir)")
    return parser.parse_args(argv)


def check(args: argparse.Namespace) -> Setup:
    """The shapes and database of ``args``; UserError naming the fix on bad input."""
    bench = select_benchmarks([args.family])[0]
    if bench.geometry.contiguous_axis is None or bench.ndim != 2:
        raise UserError(f"--family {args.family}: not a 2-D kernel with rows; use shallow")
    if args.width < 2:
        raise UserError(f"--width {args.width}: give at least 2 row lengths, e.g. --width 8")
    if args.bases < 1:
        raise UserError(f"--bases {args.bases}: give at least one, e.g. --bases 12")
    url = args.db or f"sqlite:///{Path(tempfile.gettempdir()) / f'residue-{time.time_ns()}.sqlite'}"
    if url.startswith("sqlite:///") and Path(url.removeprefix("sqlite:///")).exists():
        raise UserError(f"--db {url} already exists; give a new database")
    rng = np.random.default_rng(args.seed)
    axis = bench.geometry.contiguous_axis % bench.ndim
    bases: list[tuple[int, ...]] = []
    while len(bases) < args.bases:
        g = np.exp(rng.uniform(*np.log(SIZE_RANGE)))
        a = rng.uniform(-MAX_LOG_ASPECT, MAX_LOG_ASPECT)
        shape = tuple(round(g * np.exp(a if i == axis else -a)) for i in range(2))
        if min(shape) >= 8:
            bases.append(shape)
    kernels = LOOPS.get(args.family, tuple(k.name for k in bench.kernels))
    return Setup(url, bench, kernels, tuple(bases), args.width)


def measure(setup: Setup) -> None:
    shapes = [s for base in setup.bases for s in setup.siblings(base)]
    spec = ",".join(dict.fromkeys(map(shape_key, shapes)))
    plan = build_plan(detect_machine(), kernels=[setup.bench.name], sizes_spec=spec, passes=2)
    plan = replace(plan, interleaved=True)
    verify_plan(plan)
    db = open_database(setup.url)
    try:
        t0 = time.monotonic()
        result = run_sweep(db, plan, context=detect_context(), verified=True)
    finally:
        db.close()
    print(f"{len(plan.points)} points x 2 passes, {result.status}, {time.monotonic() - t0:.0f} s")


def profiles(setup: Setup) -> tuple[dict[tuple[str, int], np.ndarray], np.ndarray]:
    """Per (kernel, base index) the detrended log-rate deviation at each residue, and
    the floor of every point with a clean sample in both passes."""
    axis = setup.bench.geometry.contiguous_axis % setup.bench.ndim
    out: dict[tuple[str, int], np.ndarray] = {}
    floor = []
    for kernel in setup.kernels:
        basis = rate_basis(kernel)
        for b, base in enumerate(setup.bases):
            shapes = setup.siblings(base)
            first, second = pass_times(setup.url, kernel, shapes)
            points, _ = basis.points_and_footprint(np.array(shapes))
            # a pass left without a clean sample (flagged disturbed) leaves no repeat:
            # the rate is the other pass's, and the floor skips the point
            both = np.where(np.isfinite(second), np.sqrt(first * second), first)
            log_rate = np.log(points / both)
            x = np.arange(setup.width)
            detrended = log_rate - np.polyval(np.polyfit(x, log_rate, 1), x)
            dev = np.zeros(setup.width)
            dev[np.array([s[axis] for s in shapes]) % setup.width] = detrended
            out[(kernel, b)] = dev
            repeated = np.isfinite(second)
            floor.extend(np.abs(second[repeated] / first[repeated] - 1))
    return out, np.asarray(floor)


def beyond_reach(
    dev: dict[tuple[str, int], np.ndarray], kernels: tuple[str, ...], bases: int
) -> tuple[np.ndarray, np.ndarray]:
    """The deviations no interpolation between row lengths meets, and what is left of
    them after each kernel's mean pattern over the other bases (leave one base out:
    the pattern is never learned from the base it corrects; empty with one base)."""
    every = np.concatenate([dev[(k, b)] for k in kernels for b in range(bases)])
    if bases < 2:
        return every, np.array([])
    left = [
        dev[(k, b)] - np.mean([dev[(k, o)] for o in range(bases) if o != b], axis=0)
        for k in kernels
        for b in range(bases)
    ]
    return every, np.concatenate(left)


def report(setup: Setup) -> None:
    dev, floor = profiles(setup)
    every = np.array(list(dev.values()))
    cells = "  ".join(f"{r:6d}" for r in range(setup.width))
    if floor.size:
        median, p90 = 100 * np.median(floor), 100 * np.percentile(floor, 90)
        print(f"floor: median {median:.1f} %, p90 {p90:.1f} %")
    else:
        print("floor: no point kept a clean sample in both passes")
    print(f"{'row extent mod ' + str(setup.width):>22s}  {cells}")
    for what, values in (("mean %", every.mean(0)), ("median %", np.median(every, 0))):
        print(f"{what:>22s}  " + "  ".join(f"{100 * v:+6.1f}" for v in values))
    print("\nper kernel, mean over the bases")
    for kernel in setup.kernels:
        mean = np.mean([dev[(kernel, b)] for b in range(len(setup.bases))], axis=0)
        print(f"{kernel:>22s}  " + "  ".join(f"{100 * v:+6.1f}" for v in mean))
    fp = [setup.bench.footprint_bytes(b, "float64") / 2**20 for b in setup.bases]
    print("\nper base, mean over the kernels (footprint in MiB)")
    for b, base in enumerate(setup.bases):
        mean = np.mean([dev[(k, b)] for k in setup.kernels], axis=0)
        label = f"{shape_key(base)} {fp[b]:7.2f}"
        print(f"{label:>22s}  " + "  ".join(f"{100 * v:+6.1f}" for v in mean))
    between, patterned = beyond_reach(dev, setup.kernels, len(setup.bases))
    print("\nwhat a lookup that never measured the row misses (kernels x bases x residues)")
    print(f"{'between row lengths':>34s}  {summary(between)}")
    if patterned.size:
        print(f"{'less the other bases mean pattern':>34s}  {summary(patterned)}")
    print(f"{'floor':>34s}  {summary(floor)}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        setup = check(args)
    except UserError as exc:
        print(f"row_residue.py: error: {exc}", file=sys.stderr)
        return 2
    print(f"database {setup.url}")
    print(f"bases ({len(setup.bases)}): {','.join(map(shape_key, setup.bases))}")
    measure(setup)
    report(setup)
    return 0


if __name__ == "__main__":
    sys.exit(main())
