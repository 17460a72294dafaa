"""``benchdb app``: run the distributed shallow-water model, and predict such a run.

``app run`` measures (mpiexec, one ``app_run`` row per run); ``app predict``
evaluates the application model (paper 001 eq. 1-5 with the footprint lookup
of paper 003 for the loops); ``app calibrate`` measures the loop curves with
every rank of a node busy at once (the populated-node curves of paper 001
section 4).
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..app.context import PROGRAM, LoopContext
from ..app.decomposition import parse_decomposition
from ..app.model import predict_app
from ..app.scenario import energy_of
from ..errors import UserError
from ..shapes import parse_shape, shape_key
from ..units import fmt_seconds
from .app_options import CaseOptions, ProgramOption, Target, WhatIf
from .common import DbOption, JsonOption, err_console, finite, open_db, print_json, print_table
from .groups import HelpGroup
from .option_groups import option_group

if TYPE_CHECKING:
    from ..collectors.plan import Point
    from ..db.engine import Database
    from ..machine import MachineInfo

app = typer.Typer(
    help="Whole parallel runs: the built-in shallow-water model or your MPI program.\n\n"
    "Examples:\n\n"
    "  benchdb app run --grid 1024x1024 --decomp 2x1 --steps 200\n\n"
    "  benchdb app predict --grid 1024x1024 --decomp 2x1 --steps 200\n\n"
    "  benchdb app calibrate --ranks 2\n\n"
    "  benchdb app predict --program examples/shallow_mpi/benchdb.toml --grid 600x400 "
    "--decomp 2x1 --steps 300",
    no_args_is_help=True,
    cls=HelpGroup,
)

DecompOption = Annotated[str, typer.Option("--decomp", help="Decomposition PXxPY, e.g. 2x1.")]


def _fmt_j(value: Any) -> str:
    return f"{value:.3g} J"


def breakdown_rows(pred: dict[str, Any]) -> list[dict[str, Any]]:
    """Loops, exchanges, reductions and the time outside the timers, with their share and
    the source each comes from."""
    total = pred["total_s"] or 1.0
    lookup = f"lookup, {pred['context']} curves"
    rows = [
        {"term": k, "kind": "loop", "seconds": v, "source": lookup}
        for k, v in pred["loops_s"].items()
    ]
    rows += [
        {"term": k, "kind": "exchange", "seconds": v, "source": pred["exchange_source"]}
        for k, v in pred["exchanges_s"].items()
    ]
    if pred["reduction_s"]:
        source = "allreduce model"
        rows.append({"term": "allreduce", "kind": "reduction", "seconds": pred["reduction_s"],
                     "source": source})  # fmt: skip
    if pred["untimed_s"]:
        rows.append({"term": "between the timers", "kind": "untimed", "seconds": pred["untimed_s"],
                     "source": pred["exchange_source"]})  # fmt: skip
    for r in rows:
        r["share"] = r["seconds"] / total
    return rows


@app.command("predict")
@option_group("whatif", WhatIf)
@option_group("run", CaseOptions)
def predict_cmd(
    run: CaseOptions,
    decomp: DecompOption,
    whatif: WhatIf,
    program: ProgramOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Predict a whole run: loops from the lookup, exchanges as `app calibrate` measured
    them in the running model (else from the halo model; --halo-model forces it).  A
    program's loops on more than one rank are scaled by what its calibration runs' loops
    took over its curves (in its sweep no exchange runs between two loops).
    Two ± follow the total.  "spread": the lookup's spread of the loops (their samples'
    spread at the bracketing sizes), added over the loops as moving together, plus the
    measured exchanges' spread over their calibration runs (none from the halo model).
    "interpolation": the loops' interpolation error (the curve's leave-one-out error at
    the bracketing sizes: large where it bends between measured sizes, at a cache edge),
    added over the loops likewise; the exchanges are not in it.  The loops' curves pool
    the hosts of this machine's node class (--machine names another class, --host one
    host).

    Examples:

      benchdb app predict --grid 1024x1024 --decomp 2x1 --steps 200

      benchdb app predict --grid 1024x1024 --decomp 2x1 --steps 200 --host node07

      benchdb app predict --grid 1024x1024 --decomp 2x2 --halo-model --scale-bandwidth 2

      benchdb app predict --program examples/shallow_mpi/benchdb.toml --grid 1000x500 \\
          --decomp 2x1 --steps 200

    With --program, the loops are the program's own: `benchdb collect --program` swept
    them one copy at a time, `benchdb app calibrate --program --ranks P` as P copies at
    once for runs with P ranks a node.  Its exchanges come from its own runs on P ranks,
    which the same command times where the spec's [parallel] reports exchanges; else,
    and for a run across nodes (fewer ranks a node than ranks), from the halo model.
    """
    target = Target.of(program)
    case = target.case(run.app_case(parse_decomposition(decomp)))
    case.check()
    from ..app.decomposition import check_decomposition

    check_decomposition(case.grid, case.decomp)
    power = whatif.power()
    database = open_db(db)
    comm = whatif.comm(database, needed=case.decomp.ranks > 1)
    pred = predict_app(database, [case], comm, whatif.model_options(), target.app)[0]
    out = pred.to_dict()
    out["energy"] = energy_of(pred, power, whatif.cores(database), whatif.ranks_per_node)
    if as_json:
        print_json(out)
        return
    print_table(
        breakdown_rows(out),
        [
            ("term", "term", None),
            ("kind", "kind", None),
            ("seconds", "time", fmt_seconds),
            ("share", "share", lambda v: f"{100 * v:.1f}%"),
            ("source", "from", None),
        ],
        title=f"{target.app.name} {run.grid} on {case.decomp.key} ({case.decomp.ranks} ranks, "
        f"local {case.local[0]}x{case.local[1]}), {case.steps} steps, curves: {pred.context}",
    )
    energy = out["energy"]
    err_console.print(
        f"predicted total {fmt_seconds(pred.total_s)} ± {fmt_seconds(pred.uncertainty_s)}"
        f" spread ± {fmt_seconds(pred.compute_interpolation_s)} interpolation"
        f" (compute {fmt_seconds(pred.compute_s)}, "
        f"exchanges {fmt_seconds(pred.exchange_s)}"
        + (f" by the {pred.comm['model']}" if case.decomp.ranks > 1 else "")
        + f", reductions {fmt_seconds(pred.reduction_s)}"
        + (f", between the timers {fmt_seconds(pred.untimed_s)}" if pred.untimed_s else "")
        + f"{', overlapped' if whatif.overlap else ''}); dominant: {pred.dominant}"
        + (f"; energy {_fmt_j(energy['total_j'])}" if energy else "")
        + (f"; EXTRAPOLATED: {', '.join(pred.extrapolated)}" if pred.extrapolated else "")
    )


@app.command("run")
@option_group("run", CaseOptions)
def run_cmd(
    run: CaseOptions,
    decomp: DecompOption,
    max_ranks: Annotated[
        int | None, typer.Option("--max-ranks", help="Most ranks allowed (default: cores).")
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout", callback=finite, min=1, help="Stop the MPI job after this many s."
        ),
    ] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="Tag the run.")] = None,
    program: ProgramOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Run the distributed shallow-water model under mpiexec and store its timings;
    with --program, build and run the program with its spec's [parallel] launch line
    and store the times its ranks report.

    Examples:

      benchdb app run --grid 1024x1024 --decomp 2x1 --steps 200

      benchdb app run --program examples/shallow_mpi/benchdb.toml --grid 1000x500 \\
          --decomp 2x1 --steps 200
    """
    from ..collectors.app.collect import AppRunRequest, run_app, validate

    req = run.app_case(
        parse_decomposition(decomp),
        AppRunRequest,
        max_ranks=max_ranks,
        timeout=timeout,
        tags=tuple(tag or ()),
    )
    target = Target.of(program)
    running = f"running {target.app.name} {run.grid} on {req.decomp.ranks} ranks ..."
    if target.spec is None:
        validate(req, req.max_ranks)  # before the database is opened
        database = open_db(db, create=True)
        with err_console.status(running):
            app_run_id = run_app(database, req)
    else:
        from ..collectors.app import program_run

        planned = program_run.plan_program_run(target.spec, req)
        with err_console.status(running):  # the database is opened once the run succeeded
            output = program_run.execute_program_run(planned)
        database = open_db(db, create=True)
        app_run_id = program_run.store_program_run(database, planned, output)
    from ..db.app_runs import app_run_summary

    summary = app_run_summary(database, app_run_id)
    if as_json:
        print_json(summary)
        return
    rows = [{"term": k, "seconds": v} for k, v in summary["loops_s"].items()]
    rows += [{"term": k, "seconds": v} for k, v in summary["exchanges_s"].items()]
    rows.append({"term": "between the timers", "seconds": summary["untimed_s"]})
    print_table(
        rows,
        [("term", "term", None), ("seconds", "time (slowest rank)", fmt_seconds)],
        title=f"app run {app_run_id}: {target.app.name} {run.grid} on {req.decomp.key}, "
        f"{req.steps} steps",
    )
    err_console.print(
        f"measured total {fmt_seconds(summary['total_s'])} (slowest rank); energy: "
        f"{summary['energy'].get('source', 'none')} {summary['energy'].get('reason', '')}"
    )


@app.command("calibrate")
def calibrate_cmd(
    ranks: Annotated[int, typer.Option("--ranks", help="Busy processes on the node.")] = 2,
    quick: Annotated[bool, typer.Option("--quick", help="Coarse sweep, 5 ms samples.")] = False,
    sizes: Annotated[
        str | None, typer.Option("--sizes", help="Explicit shapes, e.g. 100x100,400x400.")
    ] = None,
    near: Annotated[
        str | None,
        typer.Option(
            "--near",
            help="Refresh only what a run on this global grid (MxN) rests on, on both "
            "sides of it: 1-process and populated curves, exchanges (about a minute).",
        ),
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout", callback=finite, min=1, help="Stop each MPI job after this many s."
        ),
    ] = None,
    exchanges: Annotated[
        bool,
        typer.Option(
            "--exchanges/--no-exchanges",
            help="Also time the model's halo exchanges in situ (about a minute).",
        ),
    ] = True,
    program: ProgramOption = None,
    ranks_per_node: Annotated[
        int | None,
        typer.Option(
            "--ranks-per-node",
            min=1,
            help="With --program inside a Slurm allocation of RANKS/R nodes (`benchdb slurm "
            "calibrate` makes one): time only its exchanges, in runs placed R ranks a node. "
            "Default: all RANKS on this node.",
        ),
    ] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Measure the loop curves with RANKS processes busy at once (populated node),
    then the distributed model's halo exchanges for every decomposition of RANKS.
    Each process steps its block as a RANKS-rank run does (the step in three parts
    around the exchanges), which its loops run measurably slower than the serial step
    (docs/findings/app-loop-curves.md).

    Paper 001 keeps per-cell curves for one and for several processes per node;
    `app predict` and `scenario` use these for runs with that many ranks per node.
    The exchanges are timed inside real runs of the model (square grids, local
    footprints one octave apart): packing, evicted buffers and the wait for a
    neighbour are part of an exchange, and the message model has none of them.

    On a shared host the curves drift with the other tenants (every loop of a run
    together, within the hour: docs/findings/app-loop-curves.md).  Before you rely on a
    prediction for one grid, --near GRID re-measures, in about a minute, the curve
    points (rows as long as the blocks' rows) and exchanges on both sides of that
    grid's blocks, and the points the full calibration had measured between those
    sides (else their old samples would carry the lookup).

    With --program, your program's loops: RANKS copies of it run its sweep at once,
    each pinned to a core of its own (the sizes, samples and passes of `benchdb
    collect --program`), stored as its curves of a node with RANKS busy processes.
    `app predict --program` and `scenario --program` need them for runs with that many
    ranks a node.  Then, where its spec's [parallel] reports its time in exchanges,
    its exchanges timed in its own runs on RANKS ranks, as for the built-in model.

    Examples:

      benchdb app calibrate --ranks 2 --quick

      benchdb app calibrate --ranks 2 --near 1600x1600

      benchdb app calibrate --program examples/shallow_mpi/benchdb.toml --ranks 2 --quick
    """
    from ..collectors.app.populated import check_ranks, populated_plan
    from ..machine import detect_machine

    machine = detect_machine()  # every option is checked before the database is opened
    if program is not None:
        if near is not None or timeout is not None:
            raise UserError(
                "--near and --timeout do not apply to --program (its spec's timeout "
                "bounds each run); leave them out"
            )
        if ranks_per_node is not None and ranks_per_node < ranks:
            result = _calibrate_across_nodes(db, program, ranks, ranks_per_node, machine, as_json)
        else:
            result = _calibrate_program(
                db, program, ranks, machine, quick, sizes, exchanges, as_json
            )
    elif ranks_per_node is not None:
        raise UserError("--ranks-per-node applies to --program only; leave it out")
    elif near is None:
        populated_plan(machine, ranks, quick=quick, sizes_spec=sizes)
        result = _calibrate_full(
            open_db(db, create=True), ranks, quick, sizes, exchanges, timeout, as_json
        )
    elif quick or sizes or not exchanges:
        raise UserError("--near chooses its own sizes; leave out --quick, --sizes, --no-exchanges")
    else:
        check_ranks(ranks, machine.cores)
        result = _calibrate_near(db, parse_shape(near, 2), ranks, timeout, as_json)
    if as_json:
        print_json(result)


def _calibrate_program(
    db: str | None,
    program: str,
    ranks: int,
    machine: MachineInfo,
    quick: bool,
    sizes: str | None,
    exchanges: bool,
    quiet: bool,
) -> dict[str, Any]:
    from ..app.program_app import load_program
    from ..collectors.app.populated_program import (
        calibrate_populated_program,
        populated_program_plan,
    )
    from ..collectors.app.program_exchanges import (
        calibrate_program_exchanges,
        program_calibration_cases,
    )
    from ..collectors.sweep import verify_plan

    spec = load_program(program)  # a spec without [parallel] is refused before the build
    plan = populated_program_plan(program, ranks, machine, quick=quick, sizes_spec=sizes)
    verify_plan(plan)  # the copies run once, before the database is opened
    reported = spec.parallel is not None and "exchanges" in spec.parallel.reports
    precision = "float64" if "float64" in spec.precisions else spec.precisions[0]
    cases = (
        program_calibration_cases(spec, machine, ranks, precision) if exchanges and reported else []
    )
    database = open_db(db, create=True)
    total = len(plan.points) * plan.passes
    counter = itertools.count(1)
    with err_console.status(f"timing {ranks} copies of the program at once ...") as status:

        def progress(point: Point, pass_index: int) -> None:
            status.update(
                f"{ranks} copies at once: {point.benchmark} {shape_key(point.shape)}, "
                f"pass {pass_index + 1} ({next(counter)}/{total})"
            )

        run_id, measured = calibrate_populated_program(
            database, plan, ranks, progress=None if quiet else progress, verified=True
        )
    context = str(LoopContext(ranks, PROGRAM))
    if not quiet:
        err_console.print(
            f"run {run_id}: {measured} point-passes of {ranks} copies at once, stored in "
            f"context {context}"
        )
    result: dict[str, Any] = {"run_id": run_id, "point_passes": measured, "context": context}
    if exchanges and not reported:
        if not quiet:
            err_console.print(
                f"program {spec.name} reports no time in exchanges ([parallel] reports): its "
                "exchanges stay with the halo model"
            )
    elif exchanges:
        with err_console.status(f"timing the program's exchanges on {ranks} ranks ...") as status:
            runs = calibrate_program_exchanges(
                database, spec, cases, progress=None if quiet else status.update
            )
        result["exchange_calibration"] = {"cases": len(cases), "app_runs": runs}
        if not quiet:
            err_console.print(
                f"stored {runs} calibration runs of the exchanges ({len(cases)} cases)"
            )
    return result


def _calibrate_across_nodes(
    db: str | None,
    program: str,
    ranks: int,
    ranks_per_node: int,
    machine: MachineInfo,
    quiet: bool,
) -> dict[str, Any]:
    """The program's exchanges timed in its own runs spread over the Slurm allocation
    this runs in, ``ranks_per_node`` ranks a node (the launch line's mpiexec places
    them); the loop curves of such a node come from `benchdb collect --program` or
    `app calibrate --ranks R` on it."""
    from ..app.program_app import load_program
    from ..collectors.app.program_exchanges import (
        calibrate_program_exchanges,
        program_calibration_cases,
        require_reported_exchanges,
    )

    _check_spread(ranks, ranks_per_node)
    spec = load_program(program)
    require_reported_exchanges(spec)
    precision = "float64" if "float64" in spec.precisions else spec.precisions[0]
    cases = program_calibration_cases(spec, machine, ranks, precision)
    database = open_db(db, create=True)
    placed = f"{ranks} ranks, {ranks_per_node} a node"
    with err_console.status(f"timing the program's exchanges on {placed} ...") as status:
        runs = calibrate_program_exchanges(
            database, spec, cases, progress=None if quiet else status.update,
            ranks_per_node=ranks_per_node,
        )  # fmt: skip
    if not quiet:
        err_console.print(
            f"stored {runs} calibration runs of the exchanges on {placed} ({len(cases)} cases)"
        )
    return {"exchange_calibration": {"cases": len(cases), "app_runs": runs,
                                     "ranks_per_node": ranks_per_node}}  # fmt: skip


def _check_spread(ranks: int, ranks_per_node: int) -> None:
    """UserError unless this process runs in a scheduler's job that places ``ranks`` ranks
    ``ranks_per_node`` a node: what a calibration across nodes is tagged with must be how
    its launch line's mpiexec (hydra reads the allocation) placed them."""
    from ..scheduler import job_allocation

    allocation = job_allocation()
    if allocation is None:
        raise UserError(
            f"--ranks-per-node {ranks_per_node} spreads the ranks over nodes, which only a "
            f"Slurm allocation does: run `benchdb slurm calibrate --nodes "
            f"{-(-ranks // ranks_per_node)} --ntasks-per-node {ranks_per_node} ...`"
        )
    nodes, per_node = allocation
    if nodes * per_node != ranks or per_node != ranks_per_node:
        raise UserError(
            f"this allocation places {per_node} ranks a node on {nodes} nodes, not {ranks} "
            f"ranks {ranks_per_node} a node; make --ranks and --ranks-per-node match it"
        )


def _calibrate_near(
    db: str | None, grid: tuple[int, int], ranks: int, timeout: float | None, quiet: bool
) -> dict[str, Any]:
    from ..collectors.app.near import calibrate_near, near_plan

    plan = near_plan(grid, ranks)  # checked before the database is opened
    database = open_db(db, write=True)
    say = (lambda _: None) if quiet else err_console.print
    with err_console.status(
        f"calibrating near the {shape_key(grid)} grid on 1 and {ranks} ranks ..."
    ):
        result = calibrate_near(database, plan, timeout=timeout, progress=say)
    say(
        f"stored: 1-process run {result['single_run_id']}, populated run "
        f"{result['populated_run_id']}, {result['exchange_app_runs']} exchange runs"
    )
    return result


def _calibrate_full(
    database: Database,
    ranks: int,
    quick: bool,
    sizes: str | None,
    exchanges: bool,
    timeout: float | None,
    quiet: bool,
) -> dict[str, Any]:
    from ..collectors.app.exchanges import calibrate_exchanges, calibration_cases
    from ..collectors.app.populated import calibrate_populated
    from ..machine import detect_machine

    with err_console.status(f"timing the shallow sweep on {ranks} ranks at once ..."):
        run_id, stored = calibrate_populated(
            database, ranks, quick=quick, sizes_spec=sizes, timeout=timeout
        )
    context = LoopContext(ranks)
    result: dict[str, Any] = {"run_id": run_id, "measurements": stored, "context": str(context)}
    if not quiet:
        err_console.print(f"run {run_id}: stored {stored} measurements in context {context}")
    if exchanges:
        with err_console.status(f"timing the halo exchanges of the model on {ranks} ranks ..."):
            cases = calibration_cases(detect_machine(), ranks, "float64")
            runs = calibrate_exchanges(database, cases, timeout=timeout, progress=err_console.print)
        result["exchange_calibration"] = {"cases": len(cases), "app_runs": runs}
        if not quiet:
            err_console.print(
                f"stored {runs} calibration runs of the exchanges ({len(cases)} cases)"
            )
    return result
