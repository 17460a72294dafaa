"""How well does ``benchdb predict`` answer at shapes the sweep never measured, against the floor?

In a scratch directory:

1. the held-out shapes (default the twelve shapes of ``ISSUE_SHAPES``, less any this
   machine's sweep measures itself, named when it starts; given ones may not be in
   the sweep) into ``heldout.sqlite``, by the sweep's collector, in two
   passes *interleaved*: each shape is measured again right after the next
   shape's first measurement (A1 B1 A2 C1 B2 ..., :meth:`SweepPlan.schedule`),
   so that a slow spell of the host falls on a shape and on its repeat alike;
   with them, the sweep's square nearest each held-out footprint, and each held-out
   shape with one more element per row, measured right after it (its *row step*):
   how far the rate moves with the exact row length, which no lookup meets that did
   not measure that row length;
2. the sweep ``benchdb collect --kernels FAMILY`` would run (``--quick``: the quick
   one) into ``sweep.sqlite``, through :func:`benchdb.collectors.sweep.run_sweep`;
3. with ``--refine SECONDS``, ``benchdb refine`` run on a copy of the sweep's database
   (``refined.sqlite``) right after the sweep, within that budget;
   then the held-out collection once more (``retest.sqlite``, the same plan), a
   separate collection the sweep's length after the first: what a user who measures
   the same shapes again minutes later meets (*test-retest*); its squares measured
   again show how far the sweep's own points moved since (*drift*), which no
   prediction from the sweep can beat, however dense;
4. every held-out shape predicted from the sweep alone (and from the refined
   sweep; with ``--rows-2x-only`` also from the sweep without its rectangles of rows
   more than 2x longer or shorter, the sweep before 2026-11-25) by ``benchdb
   predict``'s Python API (its whole answer path: same-row
   blocks, row-length correction, curve), each method given.  A held-out shape
   refine happened to measure itself is named and left out of the refined rows.

With ``a`` the first pass's median time and ``b`` the repeat's, it prints per
method the median, p90 and max of |predicted / a - 1| over shapes x kernels,
beside the *floor* |b / a - 1| of the same points, and the ratios error / floor
(median by median, p90 by p90, as :class:`benchdb.predict.noise.AgainstNoise`);
then the same against the *test-retest* floor |r / a - 1|, ``r`` the first pass of
the second collection;
the drift and the row step, and how far each method's predicted row step (the
rate at the row step over the rate at the shape, both predicted) lies from the
measured one: the one check here that host drift does not blur, as both shapes
of a pair were measured seconds apart; then per kernel the medians, and which
layer answered how many points.  ``--detail`` adds the medians per shape and, per
kernel, the signed error by the shape's row extent modulo 8.

    python benchmarks/heldout.py [--quick] [--family shallow] [--shapes 37x611,...]
        [--methods pchip,linear,logcurve] [--refine SECONDS] [--rows-2x-only]
        [--workdir DIR] [--detail]

Bad input (an unknown family, kernel or method, a malformed shape, a shape the
sweep measures itself, a workdir that already holds the databases) is refused
in one line, exit status 2, before anything is written.
"""

from __future__ import annotations

import argparse
import math
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from benchdb.collectors.plan import SweepPlan, build_plan, select_benchmarks
from benchdb.collectors.refine import RefineSettings, refine
from benchdb.collectors.sizes import ROUNDING_TOL
from benchdb.collectors.sweep import Context, detect_context, run_sweep, verify_plan
from benchdb.kernels.builtin.shallow import SHALLOW_LOOPS
from benchdb.kernels.registry import BUILTIN
from heldout_common import Stats, by_residue, measured, pass_times

from benchdb.db.engine import Database, open_database
from benchdb.db.measurements import measurements_frame
from benchdb.errors import UserError
from benchdb.machine import detect_machine
from benchdb.predict.basis import rate_basis
from benchdb.predict.lookup import prepare_lookup
from benchdb.predict.methods import METHODS
from benchdb.predict.noise import AgainstNoise, NoiseBasis, RepeatNoise
from benchdb.predict.predictions import predict
from benchdb.shapes import parse_shape, shape_key

ISSUE_SHAPES = (
    "37x611,611x37,150x700,333x333,1000x17,90x90,250x1200,1500x400,45x45,700x700,2000x300,123x456"
)
LOOPS = {"shallow": tuple(f"shallow.{loop}" for loop in SHALLOW_LOOPS)}
"""The kernels checked by default where a family has more: shallow's ten update loops of
paper 003 Table I (not the copies, the halo update or the whole step)."""
DATABASES = ("sweep.sqlite", "heldout.sqlite", "refined.sqlite", "retest.sqlite")


@dataclass(frozen=True)
class Setup:
    """Everything checked before anything is written."""

    work: Path
    sweep: SweepPlan
    heldout: SweepPlan
    shapes: tuple[tuple[int, ...], ...]
    anchors: tuple[tuple[int, ...], ...]  # sweep shapes measured again beside the held-out
    steps: tuple[tuple[int, ...], ...]  # each held-out shape with one more element per row
    kernels: tuple[str, ...]
    methods: tuple[str, ...]
    refine_s: float
    rows_2x: bool  # also predict without the rectangles beyond rows 2x (the sweep before)
    left_out: tuple[str, ...] = ()  # default shapes this machine's sweep measures itself


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", default="shallow", help="kernel family to sweep (shallow)")
    parser.add_argument(
        "--shapes",
        help="held-out shapes, comma-separated (default: issue 24's twelve, less any the "
        "sweep measures on this machine)",
    )
    parser.add_argument("--kernels", help="kernels to check (default: the family's loops)")
    parser.add_argument("--methods", default="pchip,linear,logcurve", help="prediction methods")
    parser.add_argument("--quick", action="store_true", help="the quick sweep and sample time")
    parser.add_argument("--workdir", type=Path, help="a new directory (default: a temp dir)")
    parser.add_argument("--detail", action="store_true", help="also the errors per shape")
    parser.add_argument(
        "--refine", type=float, default=0.0, help="also refine the sweep for this many seconds"
    )
    parser.add_argument(
        "--rows-2x-only",
        action="store_true",
        help="also predict from the sweep without its rectangles beyond rows 2x longer or "
        "shorter (the sweep before 2026-11-25), from the same measurements",
    )
    return parser.parse_args(argv)


def check(args: argparse.Namespace) -> Setup:
    """The plans and choices of ``args``; UserError naming the fix on bad input."""
    benches = select_benchmarks([args.family])
    kernel_names = [k.name for b in benches for k in b.kernels]
    if args.kernels:
        kernels = tuple(args.kernels.split(","))
        unknown = [k for k in kernels if k not in kernel_names]
        if unknown:
            raise UserError(
                f"--kernels {','.join(unknown)}: not in {args.family}; use {','.join(kernel_names)}"
            )
    else:
        kernels = LOOPS.get(args.family, tuple(kernel_names))
    methods = tuple(args.methods.split(","))
    for m in methods:
        METHODS.get(m)
    ndim = benches[0].geometry.ndim
    given = ISSUE_SHAPES if args.shapes is None else args.shapes
    shapes = tuple(parse_shape(s, ndim) for s in given.split(",") if s.strip())
    if not shapes:
        raise UserError("--shapes is empty; write e.g. --shapes 37x611,333x333")
    machine = detect_machine()
    sweep = build_plan(machine, kernels=[args.family], quick=args.quick)
    swept = {shape_key(p.shape) for p in sweep.points}
    inside = tuple(shape_key(s) for s in shapes if shape_key(s) in swept)
    if inside and args.shapes is not None:
        raise UserError(
            f"--shapes {','.join(inside)}: the sweep measures these itself; held-out shapes "
            "must not be in it"
        )
    shapes = tuple(s for s in shapes if shape_key(s) not in inside)  # the default's, by rule
    anchors = _anchors(sweep, shapes)
    steps = _row_steps(sweep, shapes)
    # each shape beside its row step, so that the two are measured seconds apart
    paired = (x for pair in zip(shapes, steps, strict=True) for x in pair)
    measure = dict.fromkeys(map(shape_key, (*paired, *anchors)))
    heldout = build_plan(
        machine,
        kernels=[args.family],
        sizes_spec=",".join(measure),
        quick=args.quick,
        passes=2,
    )
    work = (args.workdir or Path(tempfile.gettempdir()) / f"heldout-{time.time_ns()}").resolve()
    taken = [name for name in DATABASES if (work / name).exists()]
    if taken:
        raise UserError(f"--workdir {work} already holds {', '.join(taken)}; give a new directory")
    if args.refine < 0:
        raise UserError(f"--refine {args.refine}: give a number of seconds, e.g. --refine 300")
    return Setup(
        work,
        sweep,
        replace(heldout, interleaved=True),
        shapes,
        anchors,
        steps,
        kernels,
        methods,
        args.refine,
        args.rows_2x_only,
        inside,
    )


def _anchors(sweep: SweepPlan, shapes: tuple[tuple[int, ...], ...]) -> tuple[tuple[int, ...], ...]:
    """Per held-out shape, the square of the sweep nearest its footprint (distinct): measured
    again in the held-out run, they show how far the sweep's own points have drifted since."""
    bench = sweep.benchmarks()[0]
    squares = [p for p in sweep.points if len(set(p.shape)) == 1]
    out: list[tuple[int, ...]] = []
    for shape in shapes:
        fp = bench.footprint_bytes(shape, "float64")
        near = min(squares, key=lambda p: abs(np.log(p.footprint_bytes / fp))).shape
        if near not in out:
            out.append(near)
    return tuple(out)


def _row_steps(
    sweep: SweepPlan, shapes: tuple[tuple[int, ...], ...]
) -> tuple[tuple[int, ...], ...]:
    """Each shape with one more element along the contiguous axis (rows, in C or Fortran
    order); the shape itself where the geometry has none."""
    axis = sweep.benchmarks()[0].geometry.contiguous_axis
    if axis is None:
        return shapes
    return tuple(tuple(n + (d == axis % len(s)) for d, n in enumerate(s)) for s in shapes)


def collect(setup: Setup) -> dict[str, str]:
    """The held-out collection, the sweep (and refine on a copy of it), the held-out
    collection again: the two held-out collections are the sweep's length apart, minutes,
    as a user measuring again later; the databases' URLs by name."""
    verify_plan(setup.sweep)
    context = detect_context()
    setup.work.mkdir(parents=True, exist_ok=True)
    urls = {name: f"sqlite:///{setup.work / name}" for name in DATABASES}
    _sweep(urls["heldout.sqlite"], setup.heldout, context)
    _sweep(urls["sweep.sqlite"], setup.sweep, context)
    if setup.refine_s > 0:
        shutil.copyfile(setup.work / "sweep.sqlite", setup.work / "refined.sqlite")
        db = open_database(urls["refined.sqlite"])
        try:
            t0 = time.monotonic()
            settings = RefineSettings(time_budget=setup.refine_s)
            result = refine(db, setup.sweep.benchmarks(), settings, context, BUILTIN)
        finally:
            db.close()
        added = sum(len(r.added) for r in result.rounds)
        print(
            f"  refined.sqlite: {added} shapes in {len(result.rounds)} round(s), "
            f"{result.stopped}, {time.monotonic() - t0:.0f} s",
            flush=True,
        )
    else:
        del urls["refined.sqlite"]
    _sweep(urls["retest.sqlite"], setup.heldout, context)
    return urls


def _sweep(url: str, plan: SweepPlan, context: Context) -> None:
    db = open_database(url)
    try:
        t0 = time.monotonic()
        result = run_sweep(db, plan, context=context, verified=True)
    finally:
        db.close()
    print(
        f"  {url.rsplit('/', 1)[-1]}: {len(plan.points)} points x {plan.passes} pass(es), "
        f"{result.status}, {time.monotonic() - t0:.0f} s",
        flush=True,
    )


def _pct(v: float) -> str:
    return f"{100 * v:.1f} %" if np.isfinite(v) else "-"


def _ratio(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"


def row(what: str, errors: np.ndarray, floor: np.ndarray | None) -> str:
    """A markdown table row: n, median, p90, max of |errors|, and the ratios to ``floor``."""
    s = Stats.of(errors)
    ratio_med = ratio_p90 = None
    if floor is not None:
        ok = np.isfinite(errors) & np.isfinite(floor)
        noise = [RepeatNoise(abs(f), NoiseBasis.PASSES, 2) for f in floor[ok]]
        against = AgainstNoise.of(list(100 * errors[ok]), noise)
        ratio_med, ratio_p90 = against.ratio_median, against.ratio_p90
    return (
        f"| {what} | {s.n} | {_pct(s.median)} | {_pct(s.p90)} | {_pct(s.max)} | "
        f"{_ratio(ratio_med)} | {_ratio(ratio_p90)} |"
    )


SOURCES = {"sweep.sqlite": "", "refined.sqlite": " + refine"}
ROWS_2X = ", rows 2x only"


def _all(per_kernel: dict[str, np.ndarray]) -> np.ndarray:
    return np.concatenate(list(per_kernel.values()))


def _drift(setup: Setup, urls: dict[str, str]) -> np.ndarray:
    """|stored / now - 1| of the anchors (:func:`_anchors`) over the kernels: what a
    prediction resting on the sweep meets even at a measured size."""
    out = []
    for kernel in setup.kernels:
        now, _ = pass_times(urls["retest.sqlite"], kernel, setup.anchors)
        out.append(measured(urls["sweep.sqlite"], kernel, setup.anchors) / now - 1)
    return np.concatenate(out)


def _row_step(setup: Setup, urls: dict[str, str], kernel: str) -> np.ndarray:
    """The rate with one more element per row over the rate at the held-out shape, - 1
    (:func:`_row_steps`), each point's time the geometric mean of its passes: of the one
    left where the other kept no clean sample (a busy host), as a step needs no repeat."""
    basis = rate_basis(kernel)

    def rate(shapes: tuple[tuple[int, ...], ...]) -> np.ndarray:
        points, _ = basis.points_and_footprint(np.array(shapes))
        logs = np.log(pass_times(urls["heldout.sqlite"], kernel, shapes))
        return points / np.exp(np.nanmean(logs, 0))

    return rate(setup.steps) / rate(setup.shapes) - 1


def _rate_ratio(kernel: str, setup: Setup, time_s: np.ndarray, stepped: np.ndarray) -> np.ndarray:
    """The predicted rate at each row step over that at its held-out shape."""
    basis = rate_basis(kernel)
    points, _ = basis.points_and_footprint(np.array(setup.shapes))
    step_points, _ = basis.points_and_footprint(np.array(setup.steps))
    return (step_points / stepped) / (points / time_s)


def _predicted(
    db: Database, kernel: str, shapes: tuple[tuple[int, ...], ...], method: str, rows_2x: bool
) -> tuple[np.ndarray, list[str]]:
    """``predict``'s times at ``shapes`` and the layers that answered; with ``rows_2x``
    from the sweep without its rectangles of rows more than 2x longer or shorter."""
    if not rows_2x:
        frame = predict(db, kernel, shapes, method=method)
        return frame["time_s"].to_numpy(), list(frame["layer"])
    lookup = prepare_lookup(db, kernel, method=method, store=False)
    rect = lookup.curve.rectangles
    wide = np.abs(rect.log_aspect) > math.log(2) + ROUNDING_TOL
    answers = lookup.without({k for k, w in zip(rect.shapes, wide, strict=True) if w})
    answers = answers.evaluate(np.array(shapes))
    return answers.time_s, [str(x) for x in answers.layer]


def report(setup: Setup, urls: dict[str, str], detail: bool) -> None:
    """Predict every held-out point from the sweep (and the refined sweep) and print
    the tables."""
    sources = [(SOURCES[name], url, False) for name, url in urls.items() if name in SOURCES]
    retest: dict[str, np.ndarray] = {}
    if setup.rows_2x:
        sources.append((ROWS_2X, urls["sweep.sqlite"], True))
    columns = [(label, m) for label, _, _ in sources for m in setup.methods]
    errors: dict[tuple[str, str], dict[str, np.ndarray]] = {c: {} for c in columns}
    layers: dict[tuple[str, str], dict[str, int]] = {c: {} for c in columns}
    step_errors: dict[tuple[str, str], dict[str, np.ndarray]] = {c: {} for c in columns}
    floor: dict[str, np.ndarray] = {}
    step: dict[str, np.ndarray] = {}
    first: dict[str, np.ndarray] = {}  # each held-out point's first pass: what is predicted
    for kernel in setup.kernels:
        first[kernel], b = pass_times(urls["heldout.sqlite"], kernel, setup.shapes)
        floor[kernel] = b / first[kernel] - 1
        retest[kernel] = (
            pass_times(urls["retest.sqlite"], kernel, setup.shapes)[0] / first[kernel] - 1
        )
        step[kernel] = _row_step(setup, urls, kernel)
    for label, url, narrow in sources:
        db = open_database(url, create=False)
        try:
            measured_here = set(measurements_frame(db, kernels=list(setup.kernels))["shape_key"])
            seen = [shape_key(s) for s in setup.shapes if shape_key(s) in measured_here]
            if seen:
                print(f"left out of the{label or ' sweep'} rows, measured there: {','.join(seen)}")
            skip = np.array([shape_key(s) in measured_here for s in setup.shapes])
            for kernel in setup.kernels:
                for method in setup.methods:
                    # each shape and its row step from one lookup
                    both, answered = _predicted(
                        db, kernel, setup.shapes + setup.steps, method, narrow
                    )
                    n = len(setup.shapes)
                    time_s, stepped, answered = both[:n], both[n:], answered[:n]
                    err = time_s / first[kernel] - 1
                    errors[(label, method)][kernel] = np.where(skip, np.nan, err)
                    ratio = _rate_ratio(kernel, setup, time_s, stepped)
                    step_errors[(label, method)][kernel] = np.where(
                        skip, np.nan, ratio - step[kernel] - 1
                    )
                    counts = layers[(label, method)]
                    for layer in answered:
                        counts[layer] = counts.get(layer, 0) + 1
        finally:
            db.close()
    all_floor = _all(floor)
    head = "| {} | n | median | p90 | max | / floor median | / floor p90 |\n" + "|---" * 7 + "|"
    print(head.format("what"))
    for label, method in columns:
        every = np.concatenate(list(errors[(label, method)].values()))
        print(row(f"prediction, `{method}`{label}", every, all_floor))
    print(row("floor: the same points measured again", all_floor, None))
    print(row("test-retest: the same points in a second collection", _all(retest), None))
    print(row("drift: the sweep's own squares measured again", _drift(setup, urls), None))
    print(row("row step: the rate with one more element per row", _all(step), None))
    print()
    print(head.format("against the test-retest floor").replace("/ floor", "/ test-retest"))
    for label, method in columns:
        every = np.concatenate(list(errors[(label, method)].values()))
        print(row(f"prediction, `{method}`{label}", every, _all(retest)))
    for label, method in columns:
        what = f"row step predicted - measured, `{method}`{label}"
        print(row(what, _all(step_errors[(label, method)]), None))
    print()
    print(head.format("kernel"))
    for kernel in setup.kernels:
        for label, method in columns:
            what = f"{kernel} `{method}`{label}"
            print(row(what, errors[(label, method)][kernel], floor[kernel]))
        print(row(f"{kernel} floor", floor[kernel], None))
    print()
    for label, method in columns:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(layers[(label, method)].items()))
        print(f"answered by ({method}{label}): {counts}")
    if detail:
        first = [c for c in columns if c[0] != ROWS_2X][-1]
        print(
            f"\nper shape, median over the kernels: |{''.join(first[::-1])} error|, |floor|, "
            "|row step|"
        )
        err = np.abs(np.array([errors[first][k] for k in setup.kernels]))
        flo = np.abs(np.array([floor[k] for k in setup.kernels]))
        stp = np.abs(np.array([step[k] for k in setup.kernels]))
        for i, shape in enumerate(setup.shapes):
            e, f, r = (np.nanmedian(x[:, i]) for x in (err, flo, stp))
            print(f"  {shape_key(shape):>10s}  {_pct(e):>7s}  {_pct(f):>7s}  {_pct(r):>7s}")
        axis = rate_basis(setup.kernels[0]).geometry.contiguous_axis
        if axis is not None and len(setup.shapes[0]) > 1:
            extents = [s[axis] for s in setup.shapes]
            print("\n" + "\n".join(by_residue(extents, errors[first], "".join(first[::-1]))))


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        setup = check(args)
    except UserError as exc:
        print(f"heldout.py: error: {exc}", file=sys.stderr)
        return 2
    print(f"workdir {setup.work}")
    print(f"held-out shapes ({len(setup.shapes)}): {','.join(map(shape_key, setup.shapes))}")
    if setup.left_out:
        print(f"left out, the sweep measures them on this machine: {','.join(setup.left_out)}")
    t0 = time.monotonic()
    urls = collect(setup)
    print(f"collected in {time.monotonic() - t0:.0f} s\n", flush=True)
    report(setup, urls, args.detail)
    return 0


if __name__ == "__main__":
    sys.exit(main())
