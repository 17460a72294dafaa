"""``benchdb app``: run the distributed shallow-water model, and predict such a run.

``app run`` measures (mpiexec, one ``app_run`` row per run); ``app predict``
evaluates the application model (paper 001 eq. 1-5 with the footprint lookup
of paper 003 for the loops); ``app calibrate`` measures the loop curves with
every rank of a node busy at once (the populated-node curves of paper 001
section 4).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ..app.decomposition import parse_decomposition
from ..app.inputs import comm_params, power_model
from ..app.model import AppCase, ModelOptions, Scaling, predict_app
from ..app.scenario import energy_of
from ..query import parse_shape
from ..units import fmt_seconds
from .common import DbOption, JsonOption, err_console, open_db, print_json, print_table

app = typer.Typer(
    help="Run the distributed shallow-water model, or predict a whole run.\n\n"
    "Examples:\n\n"
    "  benchdb app run --grid 1024x1024 --decomp 2x1 --steps 200\n\n"
    "  benchdb app predict --grid 1024x1024 --decomp 2x1 --steps 200\n\n"
    "  benchdb app calibrate --ranks 2",
    no_args_is_help=True,
)

GridOption = Annotated[str, typer.Option("--grid", help="Global grid MxN, e.g. 1024x1024.")]
StepsOption = Annotated[int, typer.Option("--steps", help="Timed time steps.")]
PrecisionOption = Annotated[str, typer.Option("--precision", help="float64 or float32.")]
DiagOption = Annotated[
    int, typer.Option("--diag-every", help="A global mass allreduce every K steps (0: none).")
]
MachineFileOption = Annotated[
    str | None,
    typer.Option(
        "--machine-file",
        help="Communication parameters of another machine: a JSON/TOML file or a bundled "
        "name (summit, bluegene_l, ...). Default: this machine's fitted models.",
    ),
]
MachineOption = Annotated[
    str | None, typer.Option("--machine", help="Machine whose loop data to use (id/host).")
]
MethodOption = Annotated[
    str | None, typer.Option("--method", help="Lookup interpolation (default: predictor's).")
]
OverlapOption = Annotated[
    bool, typer.Option("--overlap", help="Assume exchanges overlap computation.")
]
SingleOption = Annotated[
    bool,
    typer.Option(
        "--single-process-curves",
        help="Use loop curves measured with one process per node, even for several.",
    ),
]
RpnOption = Annotated[
    int | None, typer.Option("--ranks-per-node", help="Ranks per node (default: all on one).")
]
ScaleCompute = Annotated[float, typer.Option("--scale-compute", help="What-if: x compute rate.")]
ScaleBandwidth = Annotated[
    float, typer.Option("--scale-bandwidth", help="What-if: x network bandwidth.")
]
ScaleLatency = Annotated[float, typer.Option("--scale-latency", help="What-if: x latency.")]
PowerFileOption = Annotated[
    Path | None,
    typer.Option("--power-file", help='JSON power parameters, e.g. {"core_busy_w": 12}.'),
]
CoreBusyW = Annotated[float | None, typer.Option("--core-busy-w", help="W per busy core.")]
CoreIdleW = Annotated[float | None, typer.Option("--core-idle-w", help="W per idle core.")]
PkgIdleW = Annotated[float | None, typer.Option("--package-idle-w", help="W per idle package.")]
DramW = Annotated[float | None, typer.Option("--dram-w", help="W of DRAM per node.")]


def model_options(
    *,
    method: str | None,
    machine: str | None,
    overlap: bool,
    single: bool,
    rpn: int | None,
    scale: tuple[float, float, float],
) -> ModelOptions:
    compute, bandwidth, latency = scale
    return ModelOptions(
        method=method,
        machine=machine,
        populated=not single,
        overlap=overlap,
        ranks_per_node=rpn,
        scaling=Scaling(compute, bandwidth, latency),
    )


def machine_cores(db: Any, machine: str | None) -> int:
    from ..query import resolve_machine

    with db.session() as s:
        return int(resolve_machine(s, machine).cores)


def _fmt_j(value: Any) -> str:
    return f"{value:.3g} J"


def breakdown_rows(pred: dict[str, Any]) -> list[dict[str, Any]]:
    """Loops, exchanges and reductions with their share of the total."""
    total = pred["total_s"] or 1.0
    rows = [{"term": k, "kind": "loop", "seconds": v} for k, v in pred["loops_s"].items()]
    rows += [{"term": k, "kind": "exchange", "seconds": v} for k, v in pred["exchanges_s"].items()]
    if pred["reduction_s"]:
        rows.append({"term": "allreduce", "kind": "reduction", "seconds": pred["reduction_s"]})
    for r in rows:
        r["share"] = r["seconds"] / total
    return rows


@app.command("predict")
def predict_cmd(
    grid: GridOption,
    decomp: Annotated[str, typer.Option("--decomp", help="Decomposition PXxPY, e.g. 2x1.")],
    steps: StepsOption = 100,
    precision: PrecisionOption = "float64",
    diag_every: DiagOption = 0,
    machine_file: MachineFileOption = None,
    machine: MachineOption = None,
    method: MethodOption = None,
    overlap: OverlapOption = False,
    single_process_curves: SingleOption = False,
    ranks_per_node: RpnOption = None,
    scale_compute: ScaleCompute = 1.0,
    scale_bandwidth: ScaleBandwidth = 1.0,
    scale_latency: ScaleLatency = 1.0,
    power_file: PowerFileOption = None,
    core_busy_w: CoreBusyW = None,
    core_idle_w: CoreIdleW = None,
    package_idle_w: PkgIdleW = None,
    dram_w: DramW = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Predict a whole run: loops from the lookup, exchanges from the halo model.

    Example: benchdb app predict --grid 1024x1024 --decomp 2x1 --steps 200
    """
    shape = parse_shape(grid, 2)
    case = AppCase(
        shape, parse_decomposition(decomp), _positive_steps(steps), precision, _diag(diag_every)
    )
    from ..app.decomposition import check_decomposition

    check_decomposition(shape, case.decomp)
    options = model_options(
        method=method,
        machine=machine,
        overlap=overlap,
        single=single_process_curves,
        rpn=ranks_per_node,
        scale=(scale_compute, scale_bandwidth, scale_latency),
    )
    power = power_model(power_file, core_busy_w, core_idle_w, package_idle_w, dram_w)
    database = open_db(db)
    comm = comm_params(database, machine_file, machine, needed=case.decomp.ranks > 1)
    pred = predict_app(database, [case], comm, options)[0]
    out = pred.to_dict()
    out["energy"] = energy_of(pred, power, machine_cores(database, machine), ranks_per_node)
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
        ],
        title=f"shallow {grid} on {case.decomp.key} ({case.decomp.ranks} ranks, local "
        f"{case.local[0]}x{case.local[1]}), {steps} steps, curves: {pred.context}",
    )
    energy = out["energy"]
    err_console.print(
        f"predicted total {fmt_seconds(pred.total_s)} (compute {fmt_seconds(pred.compute_s)}, "
        f"exchanges {fmt_seconds(pred.exchange_s)}, reductions {fmt_seconds(pred.reduction_s)}"
        f"{', overlapped' if overlap else ''}); dominant: {pred.dominant}"
        + (f"; energy {_fmt_j(energy['total_j'])}" if energy else "")
        + (f"; EXTRAPOLATED: {', '.join(pred.extrapolated)}" if pred.extrapolated else "")
    )


def _positive_steps(steps: int) -> int:
    from ..errors import UserError

    if steps < 1:
        raise UserError(f"--steps must be at least 1, got {steps}")
    return steps


def _diag(diag_every: int) -> int:
    from ..errors import UserError

    if diag_every < 0:
        raise UserError(f"--diag-every must be 0 (none) or positive, got {diag_every}")
    return diag_every


@app.command("run")
def run_cmd(
    grid: GridOption,
    decomp: Annotated[str, typer.Option("--decomp", help="Decomposition PXxPY, e.g. 2x1.")],
    steps: StepsOption = 100,
    precision: PrecisionOption = "float64",
    diag_every: DiagOption = 0,
    max_ranks: Annotated[
        int | None, typer.Option("--max-ranks", help="Most ranks allowed (default: cores).")
    ] = None,
    timeout: Annotated[
        float | None, typer.Option("--timeout", help="Stop the MPI job after this many s.")
    ] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="Tag the run.")] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Run the distributed shallow-water model under mpiexec and store its timings.

    Example: benchdb app run --grid 1024x1024 --decomp 2x1 --steps 200
    """
    from ..collectors.app.collect import AppRunRequest, run_app

    req = AppRunRequest(
        grid=parse_shape(grid, 2),
        decomp=parse_decomposition(decomp),
        steps=steps,
        precision=precision,
        diag_every=diag_every,
        max_ranks=max_ranks,
        timeout=timeout,
        tags=tuple(tag or ()),
    )
    from ..collectors.app.collect import validate

    validate(req)
    database = open_db(db)
    with err_console.status(f"running shallow {grid} on {req.decomp.ranks} ranks ..."):
        app_run_id = run_app(database, req)
    from ..app.runs import app_run_summary

    summary = app_run_summary(database, app_run_id)
    if as_json:
        print_json(summary)
        return
    rows = [{"term": k, "seconds": v} for k, v in summary["loops_s"].items()]
    rows += [{"term": k, "seconds": v} for k, v in summary["exchanges_s"].items()]
    print_table(
        rows,
        [("term", "term", None), ("seconds", "time (slowest rank)", fmt_seconds)],
        title=f"app run {app_run_id}: shallow {grid} on {req.decomp.key}, {steps} steps",
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
    timeout: Annotated[
        float | None, typer.Option("--timeout", help="Stop the MPI job after this many s.")
    ] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Measure the loop curves with RANKS processes busy at once (populated node).

    Paper 001 keeps per-cell curves for one and for several processes per node;
    `app predict` and `scenario` use these for runs with that many ranks per node.

    Example: benchdb app calibrate --ranks 2 --quick
    """
    from ..collectors.app.populated import calibrate_populated

    database = open_db(db)
    with err_console.status(f"timing the shallow sweep on {ranks} ranks at once ..."):
        run_id, stored = calibrate_populated(
            database, ranks, quick=quick, sizes_spec=sizes, timeout=timeout
        )
    result = {"run_id": run_id, "measurements": stored, "context": f"fullstep:ppn{ranks}"}
    if as_json:
        print_json(result)
    else:
        err_console.print(
            f"run {run_id}: stored {stored} measurements in context fullstep:ppn{ranks}"
        )
