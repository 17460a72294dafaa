"""Validate the application model against real distributed runs.

For three global grids whose per-rank footprints sit in L2, L3 and DRAM
(derived from this machine's caches), runs the distributed shallow-water
model on 1 rank (1x1) and on every decomposition of 2 ranks (2x1, 1x2),
``--repeats`` times each (interleaved, median kept: on a shared host two ranks
streaming from DRAM drift from one minute to the next, see
docs/findings/app-loop-curves.md; the runs of one rank count share one MPI
job, so they follow each other within seconds instead of one compilation
apart), predicts each run with the application model, and prints

    grid, decomposition, predicted, measured (median), error, the runs' spread,
    worst per-loop error (against the per-loop medians)

plus, per grid, whether the scenario explorer's best decomposition is the
measured best (or within 5% of it).  The database must already hold the
shallow loop curves (`benchdb collect --kernels shallow`), the populated-node
curves and the in-situ exchange calibration (`benchdb app calibrate --ranks
2`, whose grids are one octave of footprint apart from 3/4 of L1: none is a
grid validated here) and communication parameters (`benchdb comm collect` +
fit, or --machine-file).

    python benchmarks/app_validation.py --db sqlite:///val.sqlite [--machine-file F] \
        [--near] [--rounds R] [--repeats N] [--levels L2,L3,DRAM]

``--near``: right before each grid's runs, ``benchdb app calibrate --near GRID``
(:mod:`benchdb.collectors.app.near`) re-measures the curve points and exchanges
on both sides of that grid's blocks, so that the prediction and the runs see
the host in the same state (a shared host's other tenants move every loop of a
run together: docs/findings/app-loop-curves.md, "Drift").  ``--rounds R``:
calibrate and run R times per grid; the table compares the prediction from every
round's calibration pooled with the median of every round's runs (the host's slow
and fast spells then weigh alike on both sides), and ``round_errors`` (JSON) gives
each round's own prediction against its own runs.

``--from-db``: measure nothing; compare the model, as the code now computes it,
with the validation runs already stored in the database (those of an
interrupted validation, or after a change to the model).  The table then has
no round errors and no host probes.

Host probes: before each round's calibration, between it and the runs, and after
the runs, the sweep's own measurement (20 ms samples, pinned, median) of the
shallow loops on the L2 and on the DRAM grid (1 rank).  They are not used by the
prediction; they show how far the host moved between a calibration and the runs
it is compared with (``probes_us`` in the JSON, ``host drift`` in the table:
the probe during the runs over the probe during the calibration).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys

from benchdb.collectors.app.collect import run_cases
from benchdb.collectors.app.near import calibrate_near, near_plan
from benchdb.collectors.pinning import pinned
from benchdb.collectors.plan import DEFAULT_SAMPLE_TIME
from benchdb.collectors.timing import time_point
from benchdb.kernels import get_benchmark

from benchdb.app.decomposition import Decomposition
from benchdb.app.inputs import comm_params
from benchdb.app.model import AppCase, ModelOptions, predict_app
from benchdb.db.app_runs import app_run_summary, app_runs
from benchdb.db.engine import open_database
from benchdb.machine import detect_machine

BYTES_PER_POINT = 13 * 8  # paper 003 eq. 9
RANKS = 2  # the populated node validated: every decomposition of 2 ranks, and 1 rank
DECOMPS = (Decomposition(1, 1), Decomposition(2, 1), Decomposition(1, 2))
SWEEP_SAMPLES = 15  # a default sweep point: 5 samples in each of 3 passes
PROBE_LEVELS = ("L2", "DRAM")
VALIDATION_TAG = "app-validation"


def grid_for(footprint: float) -> int:
    """Even square grid M whose whole-model footprint (M+1)^2 x 104 B is about ``footprint``."""
    return max(8, 2 * round((math.sqrt(footprint / BYTES_PER_POINT) - 1) / 2))


def grids() -> dict[str, int]:
    """Per-rank footprints in L2 / L3 / DRAM for both 1 and 2 ranks per node.

    Each grid sits mid-level, away from both edges of its cache, for 1 and for 2
    ranks: near an edge the curve bends between the --near points and their chord
    misses.  L2: 1 rank 0.5 L2, 2 ranks 0.25 L2 each.  L3: the geometric middle
    of the footprints between the two ranks' private L2s and the LLC, because the
    LLC the OS reports on a VM is the host's, shared with the other tenants, and
    its far end is where they decide the speed.  Figures:
    docs/findings/app-loop-curves.md, "The validation grids".
    """
    m = detect_machine()
    l2 = m.cache("L2").size_bytes
    llc = m.last_level_cache().size_bytes
    return {
        "L2": grid_for(0.5 * l2),
        "L3": grid_for(math.sqrt(RANKS * l2 * llc)),
        "DRAM": grid_for(8 * llc),
    }


def loop_sums(samples: dict[str, list[float]]) -> list[float]:
    """Per sample, the seconds per step summed over the loops (not the un-clocked step)."""
    loops = [v for k, v in samples.items() if k != "shallow.step"]
    return [float(sum(s)) for s in zip(*loops, strict=True)]


def sweep_median(prepared) -> float:  # type: ignore[no-untyped-def]
    """Seconds per step (loops summed) as a default sweep point measures it: pinned to one
    CPU, 15 samples of 20 ms, median."""
    with pinned(1):
        timing = time_point(prepared, DEFAULT_SAMPLE_TIME, SWEEP_SAMPLES)
    return statistics.median(loop_sums(timing.samples))


class HostProbe:
    """The shallow loops at fixed sizes, prepared once: the host's speed at a moment."""

    def __init__(self, sides: dict[str, int]) -> None:
        bench = get_benchmark("shallow")
        self.prepared = {lvl: bench.prepare((m, m), "float64", 1) for lvl, m in sides.items()}

    def __call__(self) -> dict[str, float]:
        """Microseconds per step at each probe size, now."""
        return {lvl: 1e6 * sweep_median(p) for lvl, p in self.prepared.items()}


def drift(probes: dict[str, dict[str, float]]) -> dict[str, float]:
    """Per probe size, the probe around the runs over the probe around the calibration."""

    def mean(a: str, b: str, lvl: str) -> float:
        return (probes[a][lvl] + probes[b][lvl]) / 2

    return {
        lvl: mean("before_runs", "after_runs", lvl) / mean("before_calibration", "before_runs", lvl)
        for lvl in probes["after_runs"]
    }


def spread(totals: list[float]) -> str:
    """Fastest and slowest run relative to the median, e.g. '-3%/+8%'."""
    mid = statistics.median(totals)
    return f"{100 * (min(totals) / mid - 1):+.0f}%/{100 * (max(totals) / mid - 1):+.0f}%"


def measure_round(db, cases: list[AppCase], repeats: int) -> list[list[dict]]:
    """``repeats`` runs of every case, interleaved, one MPI job per rank count (the
    runs follow each other within seconds, not one ~25 s compilation apart)."""
    runs: list[list[dict]] = [[] for _ in cases]
    for ranks in sorted({c.decomp.ranks for c in cases}):
        mine = [i for i, c in enumerate(cases) if c.decomp.ranks == ranks]
        order = [i for _ in range(repeats) for i in mine]
        ids = run_cases(db, [cases[i] for i in order], kind="app", tags=(VALIDATION_TAG,))
        for i, app_run_id in zip(order, ids, strict=True):
            runs[i].append(app_run_summary(db, app_run_id))
    return runs


def compare(case: AppCase, pred, done: list[dict]) -> dict:
    """Predicted against the median of the measured runs, in total and per loop."""
    totals = [m["total_s"] for m in done]
    median_total = statistics.median(totals)
    loops = {k: statistics.median(m["loops_s"][k] for m in done) for k in pred.loops
             if k in done[0]["loops_s"]}  # fmt: skip
    loop_errors = {k: pred.loops[k] / loops[k] - 1 for k in loops}
    return {
        "grid": f"{case.grid[0]}x{case.grid[1]}",
        "decomposition": case.decomp.key,
        "local_footprint_bytes": BYTES_PER_POINT * (case.local[0] + 1) * (case.local[1] + 1),
        "steps": case.steps,
        "predicted_s": pred.total_s,
        "measured_s": median_total,
        "measured_runs_s": totals,
        "error": pred.total_s / median_total - 1,
        "predicted_spread_s": pred.uncertainty_s,  # the loops' and exchanges' spread
        "predicted_interpolation_s": pred.compute_interpolation_s,  # and leave-one-out error
        "worst_loop_error": max(abs(e) for e in loop_errors.values()),
        "loop_errors": loop_errors,
        "predicted_exchange_s": pred.exchange_s,
        "measured_exchange_s": statistics.median(sum(m["exchanges_s"].values()) for m in done),
        "predicted_untimed_s": pred.untimed_s,
        "measured_untimed_s": statistics.median(m["untimed_s"] for m in done),
        "app_run_ids": [m["app_run_id"] for m in done],
    }


def level_rows(db, comm, options, level, cases, runs, per_round) -> list[dict]:  # type: ignore[no-untyped-def]
    """One row per case: every round's calibration pooled against the median of every
    round's runs, with the scenario explorer's pick; ``per_round`` per case (may be empty)."""
    preds = predict_app(db, cases, comm, options)
    measured = [statistics.median(m["total_s"] for m in done) for done in runs]
    best = min(range(len(cases)), key=lambda i: preds[i].total_s)
    return [
        {
            "level": level, **compare(case, pred, done), **extra,
            "scenario_best": cases[best].decomp.key,
            "scenario_best_vs_measured_best": measured[best] / min(measured) - 1,
        }
        for case, pred, done, extra in zip(cases, preds, runs, per_round, strict=True)
    ]  # fmt: skip


def measure_level(db, comm, options, grid, args, probe) -> tuple[list[AppCase], list, list]:  # type: ignore[no-untyped-def]
    """``--rounds`` times: (near) calibration, prediction, ``--repeats`` runs of each case."""
    runs: list[list[dict]] = [[] for _ in DECOMPS]
    round_errors: list[list[float]] = [[] for _ in DECOMPS]
    probes: list[dict[str, dict[str, float]]] = []
    for r in range(args.rounds):
        probes.append({"before_calibration": probe()})
        if args.near:
            calibrate_near(db, near_plan(grid, 2))
        if r == 0:
            one = predict_app(db, [AppCase(grid, d, 1) for d in DECOMPS], comm, options)
            steps = max(10, math.ceil(args.seconds / max(p.total_s for p in one)))
            cases = [AppCase(grid, d, steps) for d in DECOMPS]
        now = predict_app(db, cases, comm, options)
        probes[-1]["before_runs"] = probe()
        for i, done in enumerate(measure_round(db, cases, args.repeats)):
            runs[i] += done
            mid = statistics.median(m["total_s"] for m in done)
            round_errors[i].append(now[i].total_s / mid - 1)
        probes[-1]["after_runs"] = probe()
    drifts = [drift(p) for p in probes]
    extra = [{"round_errors": e, "probes_us": probes, "host_drift": drifts} for e in round_errors]
    return cases, runs, extra


def stored_level(db, grid: tuple[int, int]) -> tuple[list[AppCase], list, list]:  # type: ignore[no-untyped-def]
    """The validation runs already stored for ``grid`` (``--from-db``), one case per
    decomposition (the step count of its first run); no round errors or probes."""
    done: dict[str, list[dict]] = {}
    for m in app_runs(db, tag=VALIDATION_TAG):
        if tuple(m["grid"]) == grid:
            done.setdefault(m["decomposition"], []).append(m)
    found = [d for d in DECOMPS if d.key in done]
    cases = [AppCase(grid, d, done[d.key][0]["steps"]) for d in found]
    runs = [[m for m in done[c.decomp.key] if m["steps"] == c.steps] for c in cases]
    return cases, runs, [{} for _ in found]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", required=True)
    ap.add_argument("--machine-file", default=None)
    ap.add_argument("--seconds", type=float, default=2.0, help="target length of each run")
    ap.add_argument("--repeats", type=int, default=5, help="runs of each case (median kept)")
    ap.add_argument("--near", action="store_true", help="calibrate near each grid first")
    ap.add_argument(
        "--rounds", type=int, default=1, help="calibrate (--near) and run this many times per grid"
    )
    ap.add_argument(
        "--from-db", action="store_true",
        help="measure nothing: compare the model with the validation runs already stored "
        "(an interrupted validation's, or after a model change)",
    )  # fmt: skip
    ap.add_argument(
        "--levels", default="L2,L3,DRAM",
        help="which grids, comma-separated (default all three), e.g. L3 to validate one again",
    )  # fmt: skip
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    sides = grids()
    levels = args.levels.split(",")
    if unknown := set(levels) - set(sides):  # before the database is opened (and upgraded)
        print(f"--levels: unknown {','.join(sorted(unknown))}; choose from "
              f"{','.join(sides)}, e.g. --levels L3", file=sys.stderr)  # fmt: skip
        raise SystemExit(2)
    db = open_database(args.db)
    comm = comm_params(db, args.machine_file, None)
    options = ModelOptions()
    probe = None if args.from_db else HostProbe({lvl: sides[lvl] for lvl in PROBE_LEVELS})
    rows = []
    for level in levels:
        grid = (sides[level], sides[level])
        if args.from_db:
            cases, runs, extra = stored_level(db, grid)
        else:
            cases, runs, extra = measure_level(db, comm, options, grid, args, probe)
        if cases:
            rows += level_rows(db, comm, options, level, cases, runs, extra)
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    head = (
        f"{'level':5} {'grid':>10} {'decomp':>6} {'local fp':>9} {'steps':>6} {'predicted':>10} "
        f"{'measured':>10} {'error':>7} {'±':>4} {'±itp':>4} {'runs spread':>11} {'loop err':>8} "
        f"{'pred xch':>9} {'meas xch':>9} {'best':>14} rounds (host drift {'/'.join(PROBE_LEVELS)})"
    )
    print(head)
    for r in rows:
        print(
            f"{r['level']:5} {r['grid']:>10} {r['decomposition']:>6} "
            f"{r['local_footprint_bytes'] / 2**20:8.2f}M {r['steps']:6d} {r['predicted_s']:9.4f}s "
            f"{r['measured_s']:9.4f}s {100 * r['error']:+6.1f}% "
            f"{100 * r['predicted_spread_s'] / r['predicted_s']:3.0f}% "
            f"{100 * r['predicted_interpolation_s'] / r['predicted_s']:3.0f}% "
            f"{spread(r['measured_runs_s']):>11} {100 * r['worst_loop_error']:7.1f}% "
            f"{r['predicted_exchange_s']:8.4f}s {r['measured_exchange_s']:8.4f}s "
            f"{r['scenario_best']} ({100 * r['scenario_best_vs_measured_best']:+5.1f}%) "
            + " ".join(
                f"{100 * e:+.0f}%({'/'.join(f'{100 * (d[lvl] - 1):+.0f}' for lvl in PROBE_LEVELS)})"
                for e, d in zip(r.get("round_errors", []), r.get("host_drift", []), strict=True)
            )
        )


if __name__ == "__main__":
    main()
