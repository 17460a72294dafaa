"""``benchdb comm``: measure MPI communication, fit its models, predict with them.

Models: piecewise postal (Kerbyson & Jones eq. 10; Choi et al. eq. 1), max-rate
(Choi et al. eq. 2-3), K-model (eq. 4), POP's two-phase halo exchange (eq. 8)
and global sums (2·log2 P stages or measured).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

from ..comm.params import CommParams, bundled_machines, load_machine_file
from ..errors import UserError
from ..shapes import parse_shape
from ..units import fmt_bytes, fmt_seconds
from .comm_options import (
    ALL_BENCHMARKS,
    DEFAULT_MAX_BYTES,
    DEFAULT_SAMPLES,
    BenchmarksOption,
    CommJobOptions,
    DecompOption,
    HaloFieldsOption,
    HaloLocalOption,
    MaxBytesOption,
    MinSampleTimeOption,
    QuickOption,
    SamplesOption,
    SizesOption,
    TagOption,
)
from .common import (
    DbOption,
    ForceOption,
    HostOption,
    JsonOption,
    MachineOption,
    emit,
    err_console,
    finite,
    input_file,
    open_db,
    print_json,
)
from .groups import HelpGroup

app = typer.Typer(
    help="MPI communication: measure (ping-pong, pairs, halo, allreduce), fit, predict.\n\n"
    "Start with `benchdb comm collect --ranks 2`, then `benchdb comm fit` and "
    "`benchdb comm predict --pattern halo2d --decomp 2x1 --local 256x256 --fields 3`.",
    no_args_is_help=True,
    cls=HelpGroup,
)


@app.command()
def collect(
    ranks: Annotated[int, typer.Option("--ranks", "-n", help="MPI ranks to start.")] = 2,
    benchmarks: BenchmarksOption = ALL_BENCHMARKS,
    max_bytes: MaxBytesOption = DEFAULT_MAX_BYTES,
    sizes: SizesOption = None,
    decomp: DecompOption = None,
    halo_local: HaloLocalOption = "16,64,256,1024",
    halo_fields: HaloFieldsOption = "1,3",
    samples: SamplesOption = DEFAULT_SAMPLES,
    min_sample_time: MinSampleTimeOption = 0.002,
    quick: QuickOption = False,
    mpiexec: Annotated[
        str | None, typer.Option(help="mpiexec to use (default: the venv's).")
    ] = None,
    mpiexec_arg: Annotated[
        list[str] | None, typer.Option(help="Extra mpiexec argument (repeatable).")
    ] = None,
    bind: Annotated[bool, typer.Option(help="Pin ranks to cores (Hydra -bind-to core).")] = True,
    timeout: Annotated[
        float | None, typer.Option(callback=finite, help="Stop the job after this many s.")
    ] = None,
    tag: TagOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Run the MPI benchmarks under mpiexec and commit every point as it is measured.

    Examples:

      benchdb comm collect --ranks 2

      benchdb comm collect --ranks 2 --quick --benchmarks pingpong,halo2d

    If any rank fails or is killed, the job ends with mpiexec's exit code and
    one line naming the rank; the points measured so far are kept, and the same
    command continues the run, measuring only the points it lacks.  On a Slurm
    cluster, `benchdb slurm comm --nodes 2` runs the same job across nodes.
    """
    from ..collectors.mpi import launcher
    from ..db.urls import child_environment

    options = CommJobOptions(
        benchmarks, max_bytes, sizes, decomp, halo_local, halo_fields, samples,
        min_sample_time, quick, tuple(tag or ()),
    )  # fmt: skip
    args = [*options.module_args(ranks, f"--ranks {ranks}"), "--progress"]
    exe = launcher.find_mpiexec(mpiexec)
    database = open_db(db, create=True)  # checked (if new, created) before any MPI work
    # The ranks' argv is visible to every user of the node (ps): the password goes in their
    # environment, which Hydra forwards to every rank.
    url, env = child_environment(database.url)
    args += ["--db", url]
    cmd = launcher.command(exe, ranks, args, bind=bind, extra=mpiexec_arg or ())
    with Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeRemainingColumn(),
        console=err_console,
        transient=True,
        disable=as_json,
    ) as progress:
        task = progress.add_task(f"MPI benchmarks on {ranks} ranks", total=None)

        def on_progress(p: dict) -> None:
            progress.update(task, completed=p["done"], total=p["total"], description=p["what"])

        result = launcher.run_job(cmd, env=env, on_progress=on_progress, timeout=timeout)
    summary = result.summary
    if as_json:
        print_json(summary)
        return
    cfg = summary["config"]
    resumed = f"continued ({summary['measured']} measured now), " if summary["resumed"] else ""
    err_console.print(
        f"run {summary['run_id']}: {resumed}{summary['points']} points from {cfg['ranks']} "
        "ranks on "
        f"{', '.join(cfg['hosts'])} in {cfg['seconds']:.1f} s ({', '.join(cfg['benchmarks'])}); "
        "next: `benchdb comm fit`"
    )


@app.command()
def fit(
    machine: MachineOption = None,
    host: HostOption = None,
    run: Annotated[int | None, typer.Option(help="Fit this run (default: the newest).")] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Fit the postal (ping-pong and Sendrecv), max-rate and allreduce models of a comm run.

    The run is the newest comm run of this machine's node class (of --machine's
    class, or of --host's runs), or --run; the models belong to the class.

    Examples:

      benchdb comm fit --json

      benchdb comm fit --host node07
    """
    from ..comm.store import fit_models

    scope, r, rows = fit_models(open_db(db, write=True), machine, run, host)
    out = [
        {
            "model_id": row.id,
            "kind": row.kind,
            "subject": row.subject,
            "run_id": r.id,
            "regimes": len(row.params.get("regimes", [])),
            "median_rel_error": row.accuracy.get("median_rel_error"),
            "max_rel_error": row.accuracy.get("max_rel_error"),
        }
        for row in rows
    ]
    emit(
        out,
        [
            ("model_id", "model", None),
            ("kind", "kind", None),
            ("subject", "subject", None),
            ("regimes", "regimes", None),
            ("median_rel_error", "median |err|", lambda v: f"{v:.1%}"),
            ("max_rel_error", "max |err|", lambda v: f"{v:.1%}"),
        ],
        as_json=as_json,
        title=f"communication models of {scope.label}, run {r.id}",
    )


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{v:+.1%}" if v < 0 else f"{v:.1%}"


@app.command()
def show(
    machine: MachineOption = None,
    host: HostOption = None,
    machine_file: Annotated[
        str | None,
        typer.Option(
            callback=input_file("--machine-file"),
            help="Show a machine file (path or bundled name) instead.",
        ),
    ] = None,
    plot: Annotated[
        Path | None, typer.Option(help="Write measured vs model to this PNG or SVG.")
    ] = None,
    force: ForceOption = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Parameters per placement and regime, fit error per regime, halo check, and a plot.

    Examples:

      benchdb comm show --plot comm.png

      benchdb comm show --machine-file summit --json
    """
    from ..comm.summary import REGIME_COLUMNS, comm_summary, regime_rows

    if plot is not None:
        if machine_file:
            raise UserError("--plot needs measured data; drop --machine-file")
        from ..figures import check_output

        check_output(plot, force)
    if machine_file:
        params, frame, halo_rows = load_machine_file(machine_file), None, []
        rows = regime_rows(params, {})
    else:
        summary = comm_summary(open_db(db), machine, host)
        params, frame, halo_rows, rows = (
            summary.params,
            summary.frame,
            summary.halo,
            summary.regimes,
        )
    if plot is not None and frame is not None:
        from ..figures import comm_fits, save

        save(comm_fits(frame, params, halo_rows), plot, force)
    if as_json:
        print_json({"machine": params.name, "source": params.source, "regimes": rows,
                    "halo_validation": halo_rows})  # fmt: skip
        return
    emit(
        rows,
        REGIME_COLUMNS,
        as_json=False,
        title=f"{params.name}: piecewise postal models, ping-pong and Sendrecv ({params.source})",
    )
    if halo_rows:
        emit(
            halo_rows,
            [
                ("config", "halo exchange", None),
                ("predicted_s", "model", fmt_seconds),
                ("measured_mpi_s", "measured (MPI)", fmt_seconds),
                ("rel_error_mpi", "error", _pct),
                ("measured_total_s", "measured (whole)", fmt_seconds),
                ("rel_error_total", "error", _pct),
            ],
            as_json=False,
            title="halo exchange: model vs measured",
        )
    if plot is not None:
        err_console.print(f"plot written to {plot}")


@app.command()
def predict(
    pattern: Annotated[str, typer.Option(help="halo2d, allreduce or pingpong.")] = "halo2d",
    decomp: Annotated[str | None, typer.Option(help="Rank grid PXxPY (halo2d).")] = None,
    local: Annotated[str | None, typer.Option(help="Local block NXxNY (halo2d).")] = None,
    halo: Annotated[int, typer.Option(help="Halo width.")] = 1,
    fields: Annotated[int, typer.Option(help="Fields exchanged together.")] = 1,
    word_bytes: Annotated[int, typer.Option(help="Bytes per value.")] = 8,
    ranks: Annotated[
        int | None, typer.Option(help="Ranks (allreduce; checked for halo2d).")
    ] = None,
    nbytes: Annotated[
        int, typer.Option("--bytes", help="Message bytes (allreduce, pingpong).")
    ] = 8,
    ranks_per_node: Annotated[int | None, typer.Option(help="Ranks per node (K-model).")] = None,
    contention: Annotated[str | None, typer.Option(help="C_x,C_y override (POP Table 1).")] = None,
    machine_file: Annotated[
        str | None,
        typer.Option(
            callback=input_file("--machine-file"),
            help="Machine file (path or bundled name: summit, ...).",
        ),
    ] = None,
    machine: MachineOption = None,
    host: HostOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Predict the time of a communication pattern from fitted models or a machine file.

    Examples:

      benchdb comm predict --pattern halo2d --decomp 4x2 --local 256x256 --halo 1 --fields 3

      benchdb comm predict --pattern halo2d --decomp 8x6 --local 1024x1024
        --ranks-per-node 6 --machine-file summit

      benchdb comm predict --pattern allreduce --ranks 1024 --machine-file bluegene_l
    """
    if pattern not in ("halo2d", "allreduce", "pingpong"):
        raise UserError(f"--pattern {pattern!r} is unknown; use halo2d, allreduce or pingpong")
    for name, value in (("--halo", halo), ("--fields", fields), ("--word-bytes", word_bytes),
                        ("--bytes", nbytes)):  # fmt: skip
        if value < 1:
            raise UserError(f"{name} {value} must be positive")
    if (ranks is not None and ranks < 1) or (ranks_per_node is not None and ranks_per_node < 1):
        raise UserError("--ranks and --ranks-per-node must be positive")
    c_pair = None
    if contention is not None:
        parts = contention.split(",")
        try:
            c_pair = (float(parts[0]), float(parts[1]))
        except (ValueError, IndexError):
            c_pair = None
        if c_pair is None or len(parts) != 2 or min(c_pair) < 0:
            raise UserError(f"--contention {contention!r} must be two non-negative numbers CX,CY")
    if pattern == "halo2d":
        from ..app.decomposition import parse_decomposition

        if decomp is None or local is None:
            raise UserError("--pattern halo2d needs --decomp PXxPY and --local NXxNY")
        d = parse_decomposition(decomp)
        if ranks is not None and d.ranks != ranks:
            raise UserError(f"--decomp {decomp} has {d.ranks} ranks, not --ranks {ranks}")
        nx, ny = parse_shape(local, 2)
    params = _params(machine_file, machine, host, db)
    if pattern == "halo2d":
        from ..comm.halo_model import predict_halo2d

        pred = predict_halo2d(params, (d.px, d.py), (nx, ny), halo=halo, fields=fields,
                              word_bytes=word_bytes, ranks_per_node=ranks_per_node,
                              contention=c_pair)  # fmt: skip
        out = {"pattern": "halo2d", "machine": params.name, "decomp": d.key,
               "local": [nx, ny], **pred.to_dict()}  # fmt: skip
        if as_json:
            print_json(out)
            return
        emit(
            [p.to_dict() for p in pred.phases],
            [
                ("phase", "phase", None),
                ("message_bytes", "message", fmt_bytes),
                ("messages_per_rank", "msgs/rank", None),
                ("placement", "placement", None),
                ("contention", "C", None),
                ("k", "k", lambda v: f"{v:.2f}"),
                ("model", "model", None),
                ("seconds", "time", fmt_seconds),
            ],
            as_json=False,
            title=f"halo2d {d.key}, local {nx}x{ny}, {params.name}: "
            f"{fmt_seconds(pred.seconds)} per exchange",
        )
        return
    placement = params.placement_for(
        inter_node=(ranks_per_node or params.ranks_per_node or 10**9) < (ranks or 2)
    )
    p2p = params.postal[placement].time
    if pattern == "pingpong":
        seconds, method = p2p(nbytes), f"postal ({placement})"
    else:
        from ..comm.allreduce_model import AllreduceModel

        if ranks is None:
            raise UserError("--pattern allreduce needs --ranks P")
        model = params.allreduce or AllreduceModel(())
        seconds, method, extrapolated = model.time(ranks, nbytes, p2p)
        method += " (extrapolated in size)" if extrapolated else ""
    out = {"pattern": pattern, "machine": params.name, "ranks": ranks, "bytes": nbytes,
           "placement": placement, "seconds": seconds, "method": method}  # fmt: skip
    emit([out], [(k, k, fmt_seconds if k == "seconds" else None) for k in out], as_json=as_json)


def _params(
    machine_file: str | None, machine: str | None, host: str | None, db: str | None
) -> CommParams:
    if machine_file:
        return load_machine_file(machine_file)
    from ..comm.store import load_params

    return load_params(open_db(db), machine, host)


@app.command()
def machines(as_json: JsonOption = False) -> None:
    """List the bundled machine files (use their names with --machine-file)."""
    rows = []
    for path in bundled_machines():
        p = load_machine_file(path)
        rows.append({"name": path.stem, "machine": p.name, "placements": ", ".join(p.postal),
                     "source": p.source, "path": str(path)})  # fmt: skip
    emit(rows, [(k, k, None) for k in ("name", "machine", "placements", "source")], as_json=as_json)
