"""Validate the whole-run model of a user's MPI program against its real runs.

For each global grid (with its step count) and each decomposition, predicts
the run with ``benchdb app predict --program``'s model (the program's swept
loops at the local block, exchanges from the halo model), runs the program
``--repeats`` times with its spec's launch line (interleaved over the
decompositions, so that a shared host's slow spell hits them alike) and
stores every run, and prints

    grid, decomposition, local block, predicted (loops + exchanges),
    measured median (loops + exchanges, of the run with the median total), error,
    the CPU share (the slowest rank's CPU time over its wall time) of each run,
    and the prediction's error against the median CPU time

``--rounds R`` measures every case R times, one round over all the grids after the
other, and prints how far a case's measured median moved between rounds beside the
prediction's errors: the test-retest floor of the whole runs themselves, which on a
shared host moves with the other tenants (docs/findings/user-mpi-programs.md).

``--drift`` also measures again, in every round after its runs, the sweep's square
nearest in footprint to each case's local block, with the curves that case was
predicted from (``benchdb collect --program`` for one process, ``benchdb app calibrate
--program --ranks P --no-exchanges`` for P copies, each into a scratch database), and
prints how far the step's loops there moved from the stored sweep: a miss of the same
size and sign as that drift is the host's since the sweep, not the model's.

On a shared host a whole run loses its core to other processes (the sweep
retakes such disturbed samples; a whole run cannot); the CPU share says how
much, so that a miss of the model is told from time lost to the other tenants.
Against CPU time a rank waiting in an exchange counts only while it polls
(MPICH polls), so on more than one rank the CPU error is a bound, not a measure.

The database must hold a sweep of the program (``benchdb collect --program``)
that does not contain the grids' blocks, and communication parameters
(``benchdb comm collect --ranks 2`` + ``benchdb comm fit``, or --machine-file).
Runs on P ranks are predicted from the loop curves of P copies at once, and from the
exchanges timed in the program's own runs (``benchdb app calibrate --program --ranks
P``), where the database holds them, with the loops scaled by what those runs' loops
took over the curves (``benchdb/app/in_run_loops.py``; the factor is printed); the
errors with one process's curves and with the halo model (neither the measured
exchanges nor the factor) are printed beside it.

    python benchmarks/program_validation.py --program examples/shallow_mpi/benchdb.toml \
        --db sqlite:///v.db --grids 80x80:20000,600x400:300,1500x1200:40 [--repeats 3]

``--slurm-nodes N`` runs every case through ``benchdb slurm app --nodes N --wait`` (P/N
ranks a node, the database a PostgreSQL URL every node reaches) and predicts it with
P/N ranks a node and the communication parameters fitted for ``--comm-host`` (the
node ``benchdb slurm comm`` ran rank 0 on, e.g. n1).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from benchdb.collectors.app.collect import AppRunRequest
from benchdb.collectors.app.program_run import (
    execute_program_run,
    plan_program_run,
    store_program_run,
)
from benchdb.kernels.spec import ProgramSpec

from benchdb.app.context import LoopContext
from benchdb.app.decomposition import parse_decomposition
from benchdb.app.inputs import comm_params
from benchdb.app.model import AppCase, ModelOptions, predict_app
from benchdb.app.program_app import load_program, program_application, program_case
from benchdb.db.app_runs import app_run_summary, app_runs
from benchdb.db.engine import Database, open_database
from benchdb.db.measurements import measurements_frame
from benchdb.errors import UserError
from benchdb.shapes import parse_shape, shape_key

TAG = "program-validation"


def _cpu_error(predicted: float, runs: list[dict]) -> float | None:
    """The prediction against the runs' median CPU time (None where not reported)."""
    cpu = [r["cpu_s"] for r in runs if r["cpu_s"] is not None]
    return predicted / statistics.median(cpu) - 1 if cpu else None


def _run_here(db: Database, spec: ProgramSpec, case: AppCase) -> int:
    """One run with the spec's launch line on this machine; its app run id."""
    req = AppRunRequest(case.grid, case.decomp, case.steps, tags=(TAG,))
    planned = plan_program_run(spec, req)
    return store_program_run(db, planned, execute_program_run(planned))


def _run_on_slurm(db: Database, args: argparse.Namespace, case: AppCase) -> int:
    """One run through ``benchdb slurm app --wait``; its app run id."""
    nodes = args.slurm_nodes
    done = subprocess.run(
        [sys.executable, "-m", "benchdb", "slurm", "app", "--nodes", str(nodes),
         "--ntasks-per-node", str(case.decomp.ranks // nodes),
         "--program", args.program, "--grid", f"{case.grid[0]}x{case.grid[1]}",
         "--decomp", case.decomp.key, "--steps", str(case.steps), "--tag", TAG,
         "--wait", "--json"],
        capture_output=True, text=True, check=False,
        env={**os.environ, "BENCHDB_URL": args.db},  # not in argv: a password stays out of ps
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"slurm app failed: {done.stderr.strip()}")
    (run,) = json.loads(done.stdout)["runs"]
    (found,) = [r for r in app_runs(db, tag=TAG) if r["run_id"] == run["id"]]
    return int(found["app_run_id"])


def _measure(db: Database, args: argparse.Namespace, spec: ProgramSpec, cases) -> dict:
    """``--repeats`` runs of every case, interleaved over the decompositions, so that a
    shared host's slow spell hits them alike; each case's run summaries."""
    runs: dict[str, list[dict]] = {c.decomp.key: [] for c in cases}
    for _ in range(args.repeats):
        for case in cases:
            if args.slurm_nodes is None:
                run_id = _run_here(db, spec, case)
            else:
                run_id = _run_on_slurm(db, args, case)
            runs[case.decomp.key].append(app_run_summary(db, run_id))
    return runs


def _row(grid_text: str, round_: int, case, pred, one, by_halo, measured: list[dict]) -> dict:
    ordered = sorted(measured, key=lambda r: r["total_s"])
    median = ordered[len(ordered) // 2]
    total = statistics.median(r["total_s"] for r in measured)
    return {
        "round": round_,
        "grid": grid_text,
        "steps": case.steps,
        "decomposition": case.decomp.key,
        "local": f"{case.local[0]}x{case.local[1]}",
        "predicted_s": pred.total_s,
        "predicted_loops_s": pred.compute_s,
        "predicted_exchanges_s": pred.exchange_s,
        "spread_s": pred.uncertainty_s,
        "interpolation_s": pred.compute_interpolation_s,
        "extrapolated": pred.extrapolated,
        "measured_s": total,
        "measured_loops_s": median["loops_s"].get("loops"),
        "measured_exchanges_s": median["exchanges_s"].get("exchanges"),
        "runs_s": [r["total_s"] for r in measured],
        "cpu_share": [
            r["cpu_s"] / r["total_s"] if r["cpu_s"] is not None else None for r in measured
        ],
        "context": pred.context,
        "in_run_loop_factor": pred.in_run_loop_factor,
        "error": pred.total_s / total - 1,
        "single_process_error": one.total_s / total - 1,
        "exchanges_by": pred.exchange_source.value,
        "halo_model_error": by_halo.total_s / total - 1,
        "cpu_error": _cpu_error(pred.total_s, measured),
    }


def _retest(rows: list[dict]) -> list[dict]:
    """Per case measured in more than one round: how far each later round's median
    moved from the first round's, against the prediction's errors in all rounds."""
    by_case: dict[tuple[str, str], list[dict]] = {}
    for r in rows:
        by_case.setdefault((r["grid"], r["decomposition"]), []).append(r)
    return [
        {
            "grid": grid,
            "decomposition": decomp,
            "retest": [r["measured_s"] / runs[0]["measured_s"] - 1 for r in runs[1:]],
            "errors": [r["error"] for r in runs],
        }
        for (grid, decomp), runs in by_case.items()
        if len(runs) > 1
    ]


@dataclass(frozen=True)
class Square:
    """A square the sweep measured, in the curves (context) a case was predicted from."""

    shape: tuple[int, int]
    context: str
    footprint_bytes: int


def _step_seconds(db: Database, spec: ProgramSpec, context: str) -> dict[str, float]:
    """Seconds a repetition of the step's loops took at each square of ``context``
    (shape key -> the loops' medians added, of the latest run that measured each), where
    every loop of the step has one."""
    step = [f"{spec.name}.{loop}" for loop in spec.parallel.step]
    frame = measurements_frame(db, kernels=step, context=context, valid_only=True)
    frame = frame[frame["shape_key"].map(lambda k: len(set(k.split("x"))) == 1)]
    latest = frame.sort_values("run_id").groupby(["shape_key", "kernel"]).last()
    sums = latest.groupby("shape_key")["t_median"].agg(["sum", "count"])
    return {key: float(row["sum"]) for key, row in sums.iterrows() if row["count"] == len(step)}


def _drift_squares(db: Database, spec: ProgramSpec, predicted) -> list[Square]:
    """For every case, the swept square nearest in log footprint to its local block, in
    the curves the case was predicted from; each square once."""
    geometry = spec.layout.geometry()
    found: dict[tuple[str, str], Square] = {}
    for _grid, cases, preds, _single, _halo in predicted:
        for case, pred in zip(cases, preds, strict=True):
            swept = [parse_shape(k, 2) for k in _step_seconds(db, spec, pred.context)]
            if not swept:
                continue
            want = geometry.footprint_bytes(case.local, case.precision)
            shape = min(
                swept,
                key=lambda s: abs(math.log(geometry.footprint_bytes(s, case.precision) / want)),
            )
            square = Square(shape, pred.context, geometry.footprint_bytes(shape, case.precision))
            found[(shape_key(shape), pred.context)] = square
    return sorted(found.values(), key=lambda s: (s.context, s.footprint_bytes))


def _measure_again(args: argparse.Namespace, spec: ProgramSpec, squares: list[Square]) -> dict:
    """``squares`` measured again as the sweep measured them, into a scratch database;
    (shape key, context) -> the step's loops' seconds a repetition."""
    again: dict[tuple[str, str], float] = {}
    by_context: dict[str, list[Square]] = {}
    for square in squares:
        by_context.setdefault(square.context, []).append(square)
    with tempfile.TemporaryDirectory(prefix="drift-") as tmp:
        url = f"sqlite:///{Path(tmp) / 'again.sqlite'}"
        for context, group in by_context.items():
            sizes = ",".join(shape_key(s.shape) for s in group)
            ranks = LoopContext.parse(context).ranks_per_node
            command = (
                ["collect", "--program", args.program, "--passes", "1"]
                if ranks == 1
                else ["app", "calibrate", "--program", args.program, "--ranks", str(ranks),
                      "--no-exchanges"]
            )  # fmt: skip
            quick = ["--quick"] if args.quick else []
            done = subprocess.run(
                [sys.executable, "-m", "benchdb", *command, *quick, "--sizes", sizes,
                 "--db", url, "--json"],
                capture_output=True, text=True, check=False,
            )  # fmt: skip
            if done.returncode != 0:
                raise SystemExit(f"measuring the sweep's squares again failed: {done.stderr}")
            scratch = open_database(url, create=False)
            try:
                seconds = _step_seconds(scratch, spec, context)
            finally:
                scratch.close()
            again.update({(key, context): t for key, t in seconds.items()})
    return again


def _drift(db: Database, args, spec: ProgramSpec, squares: list[Square], round_: int) -> list:
    """One round's drift rows: each square's step loops now against the sweep's."""
    again = _measure_again(args, spec, squares)
    rows = []
    for square in squares:
        key = shape_key(square.shape)
        stored = _step_seconds(db, spec, square.context)[key]
        now = again.get((key, square.context))
        rows.append(
            {
                "round": round_,
                "square": key,
                "context": square.context,
                "footprint_bytes": square.footprint_bytes,
                "swept_s": stored,
                "again_s": now,
                "moved": now / stored - 1 if now is not None else None,
            }
        )
    return rows


def _count(text: str) -> int:
    """A count of at least 1 (argparse: one line, exit 2, before the database is opened)."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give a whole number of at least 1")
    return int(text)


def _grids(text: str) -> list[tuple[str, tuple[int, ...], int]]:
    """``MxN:steps,...`` as (grid text, grid, steps)."""
    grids = []
    for item in text.split(","):
        grid, _, steps = item.partition(":")
        try:
            shape = parse_shape(grid, 2)
        except UserError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        if not steps.isdigit() or int(steps) < 1:
            raise argparse.ArgumentTypeError(f"{item!r}: write MxN:steps, e.g. 600x400:300")
        grids.append((grid, shape, int(steps)))
    return grids


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--program", required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--grids", required=True, type=_grids, help="MxN:steps,...")
    ap.add_argument("--decomps", default="1x1,2x1,1x2")
    ap.add_argument("--repeats", type=_count, default=3)
    ap.add_argument(
        "--rounds",
        type=_count,
        default=1,
        help="measure every case this many times, a round over all grids each: "
        "the later rounds' shift is the test-retest floor beside the error",
    )
    ap.add_argument(
        "--drift",
        action="store_true",
        help="in every round, measure again the swept square nearest each case's local "
        "block, in the curves it was predicted from, and print how far it moved",
    )
    ap.add_argument(
        "--quick",
        action="store_true",
        help="with --drift: measure the squares again as `collect --quick` does (the sweep "
        "was quick)",
    )
    ap.add_argument("--machine-file")
    ap.add_argument("--slurm-nodes", type=int, help="run each case on this many Slurm nodes")
    ap.add_argument("--comm-host", help="the host whose fitted communication parameters to use")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    try:
        spec = load_program(args.program)
    except UserError as exc:
        ap.error(str(exc))
    app = program_application(spec)
    db = open_database(args.db)
    comm = comm_params(db, args.machine_file, None, args.comm_host)
    decomps = [parse_decomposition(d) for d in args.decomps.split(",")]
    predicted = []
    for grid_text, grid, steps in args.grids:
        cases = [program_case(spec, AppCase(grid, d, steps)) for d in decomps]
        rpn = None if args.slurm_nodes is None else max(1, decomps[0].ranks // args.slurm_nodes)
        populated = True
        try:
            preds = predict_app(db, cases, comm, ModelOptions(ranks_per_node=rpn), app)
        except UserError:  # no populated curves: one process's for every case
            populated = False
            preds = predict_app(
                db, cases, comm, ModelOptions(populated=False, ranks_per_node=rpn), app
            )
        single = predict_app(
            db, cases, comm, ModelOptions(populated=False, ranks_per_node=rpn), app
        )
        halo = predict_app(
            db,
            cases,
            comm,
            ModelOptions(populated=populated, ranks_per_node=rpn, measured_exchanges=False),
            app,
        )
        predicted.append((grid_text, cases, preds, single, halo))
    squares = _drift_squares(db, spec, predicted) if args.drift else []
    rows, drift = [], []
    for round_ in range(1, args.rounds + 1):
        for grid_text, cases, preds, single, halo in predicted:
            runs = _measure(db, args, spec, cases)
            rows.extend(
                _row(grid_text, round_, *each, runs[each[0].decomp.key])
                for each in zip(cases, preds, single, halo, strict=True)
            )
        if squares:
            drift.extend(_drift(db, args, spec, squares, round_))
    retest = _retest(rows)
    if args.json:
        print(json.dumps({"cases": rows, "retest": retest, "drift": drift}, indent=1))
        return
    print("| round | grid (steps) | decomp | local | curves | exchanges | predicted: loops + "
          "exchanges | measured median: loops + exchanges | runs (CPU share) | error | with "
          "1-process curves | with the halo model | vs CPU time | in-run loops |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        runs_text = ", ".join(
            f"{t:.3f} ({100 * c:.0f} %)" if c is not None else f"{t:.3f}"
            for t, c in zip(r["runs_s"], r["cpu_share"], strict=True)
        )
        print(
            f"| {r['round']} | {r['grid']} ({r['steps']}) | {r['decomposition']} | "
            f"{r['local']} | {r['context']} | {r['exchanges_by']} | {r['predicted_s']:.3f} s: "
            f"{r['predicted_loops_s']:.3f} + "
            f"{r['predicted_exchanges_s']:.3f} | {r['measured_s']:.3f} s: "
            f"{r['measured_loops_s']:.3f} + {r['measured_exchanges_s']:.3f} | {runs_text} | "
            f"{100 * r['error']:+.1f} % | {100 * r['single_process_error']:+.1f} % | "
            f"{100 * r['halo_model_error']:+.1f} % | "
            + (f"{100 * r['cpu_error']:+.1f} % |" if r["cpu_error"] is not None else "- |")
            + f" {r['in_run_loop_factor']:.3f} |"
        )
    if retest:
        print()
        print("| grid | decomp | measured again: shift from round 1 | error, each round |")
        print("|---|---|---|---|")
        for t in retest:
            shifts = ", ".join(f"{100 * x:+.1f} %" for x in t["retest"])
            errors = ", ".join(f"{100 * x:+.1f} %" for x in t["errors"])
            print(f"| {t['grid']} | {t['decomposition']} | {shifts} | {errors} |")
        shifts = [abs(x) for t in retest for x in t["retest"]]
        errors = [abs(x) for t in retest for x in t["errors"]]
        print(
            f"\nmeasuring again moved a case's median by {100 * statistics.median(shifts):.1f} % "
            f"(median), {100 * max(shifts):.1f} % at most; the prediction missed by "
            f"{100 * statistics.median(errors):.1f} % (median), {100 * max(errors):.1f} % at most"
        )
    if drift:
        print()
        print("| round | swept square | footprint | curves | step loops: swept | again | moved |")
        print("|---|---|---|---|---|---|---|")
        for d in drift:
            again = f"{1e3 * d['again_s']:.3f} ms" if d["again_s"] is not None else "-"
            moved = f"{100 * d['moved']:+.1f} %" if d["moved"] is not None else "-"
            print(
                f"| {d['round']} | {d['square']} | {d['footprint_bytes'] / 2**20:.2f} MiB | "
                f"{d['context']} | {1e3 * d['swept_s']:.3f} ms | {again} | {moved} |"
            )
        moved = [abs(d["moved"]) for d in drift if d["moved"] is not None]
        if moved:
            median = statistics.median(moved)
            print(
                f"\nthe sweep's squares measured again moved by {100 * median:.1f} % (median), "
                f"{100 * max(moved):.1f} % at most"
            )


if __name__ == "__main__":
    main()
