"""How well does benchdb predict a user's program at sizes it never measured, against the floor?

The same model twice: the shallow-water model in Fortran 90
(``examples/shallow_fortran``, a ``--program``) and benchdb's built-in numba
``shallow``.  For each:

1. the default sweep (cache-derived sizes, 3 passes) into ``sweep.sqlite``;
2. held-out shapes measured twice, into ``heldout_a.sqlite`` and then
   ``heldout_b.sqlite`` (the two codes alternating, so a slow spell of the
   host does not fall on one code only);
3. every held-out shape predicted from the sweep alone (``benchdb predict``'s
   Python API, each method given), for the ten update loops of Table I.

It prints, per code and method, the median, 90th percentile and maximum of
|predicted / measured - 1| over shapes x loops, and beside it the *floor*: the
same points measured twice, in two collections minutes apart, |b / a - 1| (the
test-retest scatter), and the ratios error / floor, median over median and p90
over p90 (issue 32's criterion: within 1.3x quiet, 1.5x under the bursty
condition).  Each held-out collection also measures again four of the sweep's own
squares (spread over its footprints, chosen by rule): their change from the sweep,
signed, is how far the host moved between the sweep and the held-out shapes, which
the floor of two collections minutes apart does not see and the prediction does.

``--detail`` adds the errors per shape and, per loop, the signed error by the shape's
row extent modulo 8 (docs/findings/prediction-accuracy.md, "The time filter's rows").

``--condition`` runs every collection with the co-runners of
``co_runners.py`` (bursty, saturated, memory); ``--refine SECONDS`` runs
``benchdb refine`` on each code's sweep before anything is held out.

The held-out shapes are fixed by a rule, from this machine's caches, before
anything is measured: ``--shapes`` footprints at the geometric midpoints of
as many equal intervals (in log footprint) from half of L1 to the end of the
default sweep (``DEFAULT_DENSITY.end_multiple`` x the last-level cache), with
aspects (rows along the contiguous M axis over N) cycling through 3, 1/2, 5/3,
2/5, 2 and 1/3, and odd extents; a shape the sweep measures itself is moved to
the next odd M.

    python benchmarks/heldout_programs.py [--workdir DIR] [--shapes 12] [--quick]
    python benchmarks/heldout_programs.py --condition bursty --refine 120
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from benchdb.collectors.plan import build_plan
from benchdb.collectors.sizes import DEFAULT_DENSITY
from benchdb.kernels.builtin.shallow import SHALLOW, SHALLOW_ARRAYS, SHALLOW_LOOPS
from benchdb.kernels.sources import load_catalog
from co_runners import CO_RUNNERS, co_runners
from heldout_common import Stats, by_residue, measured, summary

from benchdb.db.engine import open_database
from benchdb.machine import detect_machine
from benchdb.predict.predictions import predict
from benchdb.shapes import shape_key

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "examples" / "shallow_fortran" / "benchdb.toml"
ASPECTS = (3.0, 1 / 2, 5 / 3, 2 / 5, 2.0, 1 / 3)
RETEST_SQUARES = 4  # of the sweep's squares, measured again with the held-out shapes
HELDOUT = ("heldout_a", "heldout_b")
CODES = {
    "fortran": ("--program", str(SPEC), "shallowf90"),
    "numba": ("--kernels", "shallow", "shallow"),
}


def _odd(x: float) -> int:
    n = max(3, round(x))
    return n if n % 2 else n + 1


def heldout_shapes(count: int) -> list[tuple[int, int]]:
    """The held-out shapes (see the module docstring); none of them in the default sweep."""
    machine = detect_machine()
    l1 = machine.data_caches()[0].size_bytes
    llc = machine.last_level_cache().size_bytes
    swept = {p.shape for p in build_plan(machine, kernels=["shallow"]).points}
    lo, hi = math.log(l1 / 2), math.log(DEFAULT_DENSITY.end_multiple * llc)
    shapes = []
    for i in range(count):
        footprint = math.exp(lo + (hi - lo) * (i + 0.5) / count)
        aspect = ASPECTS[i % len(ASPECTS)]
        cells = footprint / (SHALLOW_ARRAYS * 8)  # (M+1)(N+1): paper 003 eq. 9, float64
        m = _odd(math.sqrt(cells * aspect) - 1)
        n = _odd(math.sqrt(cells / aspect) - 1)
        while (m, n) in swept or (m, n) in shapes:
            m += 2
        shapes.append((m, n))
    return shapes


def benchdb(*args: str) -> None:
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-m", "benchdb", *args], check=True)
    print(f"  {' '.join(args[:3])} ... done in {time.monotonic() - t0:.0f} s", flush=True)


def sweep_squares(count: int) -> list[tuple[int, int]]:
    """``count`` of the default sweep's squares, evenly spread over its footprints."""
    plan = build_plan(detect_machine(), kernels=["shallow"])
    squares = sorted({p.shape for p in plan.points if p.shape[0] == p.shape[1]})
    return [squares[round((len(squares) - 1) * (i + 0.5) / count)] for i in range(count)]


def collect_all(urls: dict[str, str], sizes: str, sweep: list[str], refine: float) -> None:
    """Each code's sweep (refined for ``refine`` seconds if given), then the held-out
    shapes (and the sweep's squares measured again) twice, the codes alternating."""
    for option, target, prefix in CODES.values():
        benchdb("collect", option, target, *sweep, "--quiet", "--db", urls["sweep"])
        if refine > 0:
            spec = [option, target] if option == "--program" else []
            benchdb("refine", *spec, "-k", prefix, "--time-budget", f"{refine:g}",
                    "--quiet", "--db", urls["sweep"])  # fmt: skip
    for copy in HELDOUT:
        for option, target, _ in CODES.values():
            benchdb("collect", option, target, "--sizes", sizes, "--quiet", "--db", urls[copy])


def ratios(errors: list[np.ndarray], floor: list[np.ndarray]) -> str:
    """Error over floor: median over median, p90 over p90 (the points both have)."""
    e, f = np.concatenate(errors), np.concatenate(floor)
    ok = np.isfinite(e) & np.isfinite(f)
    err, flo = Stats.of(e[ok]), Stats.of(f[ok])
    if not err.n or not flo.median or not flo.p90:
        return "no points"
    return f"median {err.median / flo.median:5.2f}x  p90 {err.p90 / flo.p90:5.2f}x"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, help="where the databases go (default: a temp dir)")
    parser.add_argument("--shapes", type=int, default=12, help="held-out shapes (at least 10)")
    parser.add_argument("--quick", action="store_true", help="quick sweeps (a first look only)")
    parser.add_argument("--methods", default="pchip,linear", help="prediction methods")
    parser.add_argument("--skip-collect", action="store_true", help="reuse the workdir's databases")
    parser.add_argument("--detail", action="store_true", help="also the errors per shape")
    parser.add_argument(
        "--condition", choices=sorted(CO_RUNNERS), default="quiet", help="co-runners, collecting"
    )
    parser.add_argument(
        "--refine", type=float, default=0, metavar="SECONDS", help="refine each sweep first"
    )
    args = parser.parse_args()
    work = (args.workdir or Path(tempfile.mkdtemp(prefix="heldout-"))).resolve()
    work.mkdir(parents=True, exist_ok=True)
    urls = {name: f"sqlite:///{work / f'{name}.sqlite'}" for name in ("sweep", *HELDOUT)}
    shapes = heldout_shapes(args.shapes)
    squares = sweep_squares(RETEST_SQUARES)
    sizes = ",".join(shape_key(s) for s in [*shapes, *squares])
    fp = [SHALLOW.footprint_bytes(s, "float64") for s in shapes]
    print(f"workdir {work}")
    print(f"held-out shapes ({len(shapes)}): {','.join(map(shape_key, shapes))}")
    print(f"their footprints: {', '.join(f'{f / 2**20:.3g} MiB' for f in fp)}")
    print(f"the sweep's squares measured again: {', '.join(map(shape_key, squares))}")
    load_catalog([SPEC], installed=False)  # builds the program before anything is timed
    sweep = ["--quick"] if args.quick else []
    print(f"condition: {args.condition}")
    if not args.skip_collect:
        with co_runners(args.condition, max_seconds=3600):
            collect_all(urls, sizes, sweep, args.refine)
    db = open_database(urls["sweep"])
    print()
    for code, (_, _, prefix) in CODES.items():
        floor, drift, errors = [], [], {m: [] for m in args.methods.split(",")}
        for loop in SHALLOW_LOOPS:
            kernel = f"{prefix}.{loop}"
            swept = measured(urls["sweep"], kernel, squares)
            drift += [measured(urls[c], kernel, squares) / swept - 1 for c in HELDOUT]
            a = measured(urls["heldout_a"], kernel, shapes)
            b = measured(urls["heldout_b"], kernel, shapes)
            floor.append(b / a - 1)
            for method in errors:
                predicted = predict(db, kernel, shapes, method=method)["time_s"].to_numpy()
                errors[method].append(predicted / a - 1)
        for method, errs in errors.items():
            print(f"{code:8s} {method:7s} prediction  {summary(np.concatenate(errs))}")
        print(f"{code:8s} floor   measured twice {summary(np.concatenate(floor))}")
        moved = np.concatenate(drift)
        print(
            f"{code:8s} drift   sweep's squares again {summary(moved)}  "
            f"signed median {100 * np.nanmedian(moved):+.1f} %"
        )
        for method, errs in errors.items():
            print(f"{code:8s} {method:7s} error / floor  {ratios(errs, floor)}")
        if args.detail:
            first = next(iter(errors))
            print(f"  per shape, median over the loops: |{first} error|, |floor|")
            err, flo = np.abs(np.array(errors[first])), np.abs(np.array(floor))
            for i, shape in enumerate(shapes):
                e, f = 100 * np.nanmedian(err[:, i]), 100 * np.nanmedian(flo[:, i])
                print(f"  {shape_key(shape):>10s} {fp[i] / 2**20:8.3g} MiB  {e:5.1f} %  {f:5.1f} %")
            loops = zip(SHALLOW_LOOPS, errors[first], strict=True)
            signed = {f"{prefix}.{loop}": e for loop, e in loops}
            extents = [s[0] for s in shapes]  # both codes' rows run along M
            print("\n".join(by_residue(extents, signed, first)))
    db.close()


if __name__ == "__main__":
    main()
