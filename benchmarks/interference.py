"""What other processes do to the stored medians, with the disturbance evidence ignored and used.

The same points -- shallow, a stencil, STREAM triad and a program (the Fortran
example, examples/shallow_fortran, when gfortran can build it, or the one
``--program`` names, e.g. the C example examples/shallow_mpi) at sizes from the
caches to DRAM -- are measured by the collector's own timing
(``time_point``, pinned to one CPU as a sweep is, ``--passes`` passes pooled as
a sweep pools them) under each condition in turn:

* quiet: nothing started here (the host's other tenants still run);
* bursty: two co-runner processes, each busy about 200 ms in every second at a
  random phase, unpinned;
* saturated: one CPU-bound co-runner per core;
* memory: one co-runner streaming a 256 MiB array (bandwidth, not CPU time).

For each condition it prints, with the evidence ignored (the first samples of
each pass, as many as a pass asks for, as the collector took them before it read
any evidence) and used (the collector's rule: disturbed samples set aside and
retaken, statistics from the clean ones):

* the median CV of the points;
* the share of samples set aside as disturbed (and retaken);
* the points flagged noisy, and disturbed;
* the median and p90 shift of each point's median from its quiet median (the
  geometric mean of the quiet runs' medians), in percent; for a quiet run, its
  shift from the other quiet run.

The default order, quiet, bursty, saturated, memory, quiet, brackets the loaded
conditions by two quiet runs; the last lines check the bursty run against the
quiet-to-quiet shift (issue 32's criterion: within 1.25x it plus 0.5 points, in
median and p90).  Co-runners stop themselves after ``--max-seconds`` and are
killed when their condition ends.  It also prints what reading the evidence
costs per sample.

    python benchmarks/interference.py                    # about 3 minutes
    python benchmarks/interference.py --conditions quiet,saturated,quiet --passes 2 --json out.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import shutil
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from benchdb.collectors.pinning import pinned
from benchdb.collectors.plan import DEFAULT_SAMPLE_TIME, MIN_SAMPLES, Point
from benchdb.collectors.probes import Probe
from benchdb.collectors.record import DISTURBED, NOISY, add_pass, measurement_rows
from benchdb.collectors.timing import PointTiming, time_point
from benchdb.kernels.sources import load_catalog
from co_runners import CO_RUNNERS, co_runners

from benchdb.evidence import kept_and_set_aside, lost_fraction
from benchdb.shapes import shape_key

FORTRAN = Path(__file__).resolve().parent.parent / "examples" / "shallow_fortran" / "benchdb.toml"
POINTS: tuple[tuple[str, tuple[int, ...]], ...] = (
    ("shallow", (64, 64)),  # L1/L2
    ("shallow", (400, 400)),  # L3
    ("shallow", (1400, 1400)),  # DRAM
    ("stencil2d5", (512, 512)),
    ("stencil2d5", (2048, 2048)),
    ("stream.triad", (100_000,)),
    ("stream.triad", (8_000_000,)),
)
PROGRAM_POINTS = ((200, 200), (800, 800))


def catalog(program: Path | None):  # type: ignore[no-untyped-def]
    return load_catalog([str(program)] if program else [], installed=False)


def program_name(cat) -> str | None:  # type: ignore[no-untyped-def]
    """The name of the program the catalog holds beside the built-ins, if any."""
    return next(iter(cat.source_of), None)


def points(program: str | None) -> list[tuple[str, tuple[int, ...]]]:
    found = list(POINTS)
    if program:
        found += [(program, shape) for shape in PROGRAM_POINTS]
    return found


def measure(todo, prepared, passes: int) -> dict[tuple, list[PointTiming]]:  # type: ignore[no-untyped-def]
    """Every point's timings, ``passes`` passes over them (the second reversed, as a sweep)."""
    out: dict[tuple, list[PointTiming]] = {key: [] for key in todo}
    for p in range(passes):
        for key in todo if p % 2 == 0 else list(reversed(todo)):
            with pinned(1):
                out[key].append(time_point(prepared[key], DEFAULT_SAMPLE_TIME, MIN_SAMPLES))
    return out


def _ignored(timing: PointTiming, kernel: str) -> list[float]:
    """The samples a collector blind to the evidence would have kept: the first ones."""
    return timing.samples[kernel][: timing.wanted or None]


def summarise(cat, measured: dict[tuple, list[PointTiming]]) -> dict[str, dict]:  # type: ignore[no-untyped-def]
    program = program_name(cat)
    """Per mode ('ignored', 'used'): each kernel-point's median, CV and flags."""
    modes: dict[str, dict] = {"ignored": {}, "used": {}}
    taken = aside = 0
    by_sample: list[tuple[float, float, float]] = []  # lost share, others busy, excess time
    child_gap: list[float] = []  # a program's wall time its CPU time leaves uncovered
    program_lost: dict[str, list[float]] = {  # seconds, per run
        "clean": [],
        "kept (no clean run: flagged)": [],
        "set aside": [],
    }
    for (name, shape), timings in measured.items():
        by_sample += excess(timings)
        if name == program:
            child_gap += [e.wall_s - e.cpu_s for t in timings for e in t.evidence]
            runs = [e for t in timings for e in t.evidence]  # pooled, as the point's row
            keep, dropped = kept_and_set_aside([not e.disturbed for e in runs])
            for i in keep:
                what = "kept (no clean run: flagged)" if runs[i].disturbed else "clean"
                program_lost[what].append(runs[i].lost_s)
            program_lost["set aside"] += [runs[i].lost_s for i in dropped]
        bench = cat.get(name)
        infos = {k.name: (i, k) for i, k in enumerate(bench.kernels)}
        counts = bench.kernel_points(shape)
        point = Point(name, shape, "float64", 1, bench.footprint_bytes(shape, "float64"))
        rows = measurement_rows(1, point, counts, timings[0], "cpus:0", infos)
        for t in timings[1:]:
            for row in rows:
                add_pass(row, t, infos)
        taken += sum(len(t.evidence) for t in timings)
        aside += sum(t.retaken for t in timings)
        for row in rows:
            kernel = next(n for n, (i, _) in infos.items() if i == row.kernel_id)
            if not row.valid or row.t_median <= 0:
                continue
            blind = [s for t in timings for s in _ignored(t, kernel)]
            modes["used"][(name, shape, kernel)] = (row.t_median, row.t_cv, list(row.flags))
            modes["ignored"][(name, shape, kernel)] = (
                statistics.median(blind),
                float(np.std(blind, ddof=1) / np.mean(blind)),
                [NOISY] if np.std(blind, ddof=1) / np.mean(blind) > 0.10 else [],
            )
    modes["retaken_share"] = aside / taken if taken else 0.0
    modes["by_sample"] = by_sample
    modes["child_gap"] = child_gap
    modes["program_lost"] = program_lost
    return modes


def excess(timings: list[PointTiming]) -> list[tuple[float, float, float]]:
    """Each sample's lost share (of the time it reports), the share of its wall time the
    other CPUs were busy, and how much longer it ran (its kernels' times added) than the
    median of the point's samples that lost under 0.1 % while the other CPUs were idle
    (those that lost under 0.1 % where no such sample was taken)."""
    rows = [
        (
            lost_fraction(e),
            (e.others_busy_s or 0.0) / e.wall_s,
            sum(t.samples[k][i] for k in t.samples),
        )
        for t in timings
        for i, e in enumerate(t.evidence)
    ]
    quiet = [x for lost, others, x in rows if lost < 0.001 and others == 0]
    quiet = quiet or [x for lost, _, x in rows if lost < 0.001]
    if not quiet:
        return []
    ref = statistics.median(quiet)
    return [(lost, others, x / ref - 1) for lost, others, x in rows]


BINS = (0.0, 0.001, 0.005, 0.01, 0.02, 0.05, math.inf)


def threshold_table(runs: list[tuple[str, dict]]) -> None:
    """Samples by lost share: how many, and how much longer than undisturbed ones they ran."""
    print()
    print("samples by the share of their wall time lost (share of samples; median excess time)")
    heads = [f"<{hi * 100:g}%" if hi < math.inf else f">={lo * 100:g}%"
             for lo, hi in itertools.pairwise(BINS)]  # fmt: skip
    print(f"{'condition':10s} " + " ".join(f"{h:>16s}" for h in heads))
    for condition, result in runs:
        data = result["by_sample"]
        cells = []
        for lo, hi in itertools.pairwise(BINS):
            inside = [x for share, _, x in data if lo <= share < hi]
            cells.append(
                f"{100 * len(inside) / max(1, len(data)):5.1f}%; "
                + (f"{100 * statistics.median(inside):+6.1f}%" if inside else "     -")
            )
        print(f"{condition:10s} " + " ".join(f"{c:>16s}" for c in cells))
    print()
    print("clean samples (lost < 1 %) by whether the other CPUs were busy meanwhile")
    print(f"{'condition':10s} {'others idle':>18s} {'others busy':>18s}")
    for condition, result in runs:
        clean = [(others, x) for lost, others, x in result["by_sample"] if lost < 0.01]
        cells = []
        for busy in (False, True):
            inside = [x for others, x in clean if (others > 0) == busy]
            cells.append(
                f"{100 * len(inside) / max(1, len(clean)):5.1f}%; "
                + (f"{100 * statistics.median(inside):+6.1f}%" if inside else "     -")
            )
        print(f"{condition:10s} " + " ".join(f"{c:>18s}" for c in cells))
    program_table(runs)
    gaps = [g for c, r in runs if c == "quiet" for g in r["child_gap"]]
    if gaps:
        print(f"program runs, quiet: wall - CPU median {statistics.median(gaps) * 1e3:.2f} ms, "
              f"p90 {pct(gaps, 90) * 1e3:.2f} ms, max {max(gaps) * 1e3:.2f} ms "
              f"({len(gaps)} runs)")  # fmt: skip


def program_table(runs: list[tuple[str, dict]]) -> None:
    """The program's runs (a sample each) by what the point's median made of them, and
    how much time the evidence says each lost.  A clean run that lost a scheduler slice
    (1 ms or more) would be a disturbed sample silently in a median; a point with no
    clean run keeps them all, flagged ``disturbed``."""
    if not any(any(lost.values()) for lost in (r["program_lost"] for _, r in runs)):
        return
    print()
    print("program runs: time lost, by what the median made of them")
    for condition, result in runs:
        cells = []
        for what, lost in result["program_lost"].items():
            ms = [x * 1e3 for x in lost]
            over = sum(x >= 1.0 for x in ms)
            cells.append(f"{what} {len(ms)}, max {max(ms, default=0):.2f} ms, >= 1 ms: {over}")
        print(f"{condition:10s} " + "; ".join(cells))


def shifts(values: dict, reference: dict) -> list[float]:
    return [abs(values[k][0] / reference[k] - 1) * 100 for k in values if reference.get(k, 0) > 0]


def pct(values: Sequence[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else math.nan


def probe_cost(n: int = 2000) -> float:
    """Microseconds one sample's evidence costs: an empty probe, median of ``n``."""
    costs = []
    with pinned(1), Probe() as probe:
        for _ in range(n):
            t0 = time.perf_counter()
            probe.measure(lambda: None)
            costs.append(time.perf_counter() - t0)
    return statistics.median(costs) * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--conditions", default="quiet,bursty,saturated,memory,quiet")
    ap.add_argument("--passes", type=int, default=3, help="passes over the points per condition")
    ap.add_argument("--max-seconds", type=float, default=300, help="co-runners' own deadline")
    ap.add_argument("--no-program", action="store_true", help="leave out the program")
    ap.add_argument(
        "--program", type=Path, help="the program's spec (default: the Fortran example)"
    )
    ap.add_argument("--json", type=Path, help="also write every figure here")
    args = ap.parse_args()
    conditions = args.conditions.split(",")
    if unknown := set(conditions) - set(CO_RUNNERS):
        ap.error(f"unknown condition(s) {', '.join(sorted(unknown))}; use {', '.join(CO_RUNNERS)}")
    program = args.program or (FORTRAN if shutil.which("gfortran") is not None else None)
    cat = catalog(None if args.no_program else program)
    todo = points(program_name(cat))
    cost = probe_cost()
    print(f"evidence per sample: {cost:.1f} us ({cost / (DEFAULT_SAMPLE_TIME * 1e6) * 100:.3f} % "
          f"of a {DEFAULT_SAMPLE_TIME * 1e3:.0f} ms sample)")  # fmt: skip
    print(f"points: {', '.join(f'{n} {shape_key(s)}' for n, s in todo)}"
          + ("" if program_name(cat) else " (no program: none given, or no gfortran)"))  # fmt: skip
    with pinned(1):
        prepared = {key: cat.get(key[0]).prepare(key[1], "float64", 1) for key in todo}
    runs: list[tuple[str, dict]] = []
    for condition in conditions:
        t0 = time.monotonic()
        with co_runners(condition, args.max_seconds):
            measured = measure(todo, prepared, args.passes)
        runs.append((condition, summarise(cat, measured)))
        print(f"  {condition}: {time.monotonic() - t0:.0f} s", file=sys.stderr)
    quiet = [r for c, r in runs if c == "quiet"]
    report(runs, quiet, args.json)
    threshold_table(runs)


def _reference(quiet: list[dict], mode: str) -> dict:
    keys = set.intersection(*(set(q[mode]) for q in quiet)) if quiet else set()
    return {k: math.exp(statistics.fmean(math.log(q[mode][k][0]) for q in quiet)) for k in keys}


def report(runs: list[tuple[str, dict]], quiet: list[dict], out: Path | None) -> None:
    figures = []
    print()
    print(f"{'condition':10s} {'evidence':8s} {'median CV':>9s} {'set aside':>9s} "
          f"{'noisy':>6s} {'disturbed':>9s} {'shift med':>9s} {'shift p90':>9s}")  # fmt: skip
    for i, (condition, result) in enumerate(runs):
        for mode in ("ignored", "used"):
            rows = result[mode]
            if condition == "quiet" and len(quiet) == 2:
                other = quiet[1] if result is quiet[0] else quiet[0]
                ref = {k: v[0] for k, v in other[mode].items()}
            else:
                ref = _reference(quiet, mode)
            moved = shifts(rows, ref)
            fig = {
                "run": i,
                "condition": condition,
                "evidence": mode,
                "points": len(rows),
                "median_cv_pct": 100 * statistics.median(v[1] for v in rows.values()),
                "set_aside_pct": 100 * result["retaken_share"] if mode == "used" else 0.0,
                "noisy": sum(NOISY in v[2] for v in rows.values()),
                "disturbed": sum(DISTURBED in v[2] for v in rows.values()),
                "shift_median_pct": pct(moved, 50),
                "shift_p90_pct": pct(moved, 90),
            }
            figures.append(fig)
            print(f"{condition:10s} {mode:8s} {fig['median_cv_pct']:8.1f}% "
                  f"{fig['set_aside_pct']:8.1f}% {fig['noisy']:6d} {fig['disturbed']:9d} "
                  f"{fig['shift_median_pct']:8.2f}% {fig['shift_p90_pct']:8.2f}%")  # fmt: skip
    print(f"({len(runs[0][1]['used'])} kernel-points; shifts from the quiet runs' geometric mean,"
          " a quiet run's from the other quiet run)")  # fmt: skip
    check_bursty(figures)
    if out is not None:
        out.write_text(json.dumps(figures, indent=1))


def check_bursty(figures: list[dict]) -> None:
    """Issue 32: bursty shift within 1.25x the quiet-to-quiet shift + 0.5 points."""
    for mode in ("ignored", "used"):
        q = [f for f in figures if f["condition"] == "quiet" and f["evidence"] == mode]
        b = [f for f in figures if f["condition"] == "bursty" and f["evidence"] == mode]
        if len(q) != 2 or not b:
            continue
        for stat in ("shift_median_pct", "shift_p90_pct"):
            limit = 1.25 * q[0][stat] + 0.5
            verdict = "within" if b[0][stat] <= limit else "BEYOND"
            print(f"bursty, evidence {mode}: {stat} {b[0][stat]:.2f} {verdict} "
                  f"1.25 x quiet-to-quiet {q[0][stat]:.2f} + 0.5 = {limit:.2f}")  # fmt: skip
        print(f"bursty, evidence {mode}: noisy {b[0]['noisy']} vs quiet {q[0]['noisy']} "
              f"+ 10% of {b[0]['points']} points")  # fmt: skip


if __name__ == "__main__":
    main()
