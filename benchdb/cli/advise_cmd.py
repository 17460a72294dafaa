"""``benchdb advise``: does this shape sit on a measured dip, and which padding avoids it?

A thin layer over :func:`benchdb.predict.advice.advise` (why padding, and how
the candidates are predicted, is there); ``--measure`` times the query and the
candidates now, in one interleaved sweep, through the collectors ``benchdb
collect`` uses.  Every option is checked before the database is opened.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..db.runs import ADVISE_MODE
from ..errors import UserError
from ..units import fmt_seconds
from .common import (
    DbOption,
    HostOption,
    JsonOption,
    MachineOption,
    console,
    open_db,
    print_json,
    print_table,
)
from .predict_cmd import KernelOption, MethodOption, PrecisionOption, ThreadsOption

if TYPE_CHECKING:
    from ..collectors.plan import SweepPlan
    from ..db.engine import Database
    from ..predict.advice import Advice
    from ..predict.lookup import Lookup

MAX_PAD = 64
MEASURE_PASSES = 3
MEASURE_TAG = "advise"


def advise(
    kernel: KernelOption,
    shape: Annotated[
        str, typer.Option("--shape", "-s", help="The problem shape to check, e.g. 2048x2048.")
    ],
    pad: Annotated[
        int,
        typer.Option(help=f"Largest padding tried per extent (1..{MAX_PAD}): S + 0..pad each."),
    ] = 8,
    top: Annotated[int, typer.Option(help="How many candidates to list (at least 1).")] = 5,
    method: MethodOption = "pchip",
    threads: ThreadsOption = 1,
    precision: PrecisionOption = "float64",
    machine: MachineOption = None,
    host: HostOption = None,
    measure: Annotated[
        bool,
        typer.Option(
            "--measure",
            help="Also time S and the listed candidates now, on this machine, in one sweep "
            "with their passes interleaved (stored as a run tagged 'advise').",
        ),
    ] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Is a shape slowed by a measured dip (cache thrashing), and which padding avoids it?

    A dip is a measured point slower than both its neighbours (`benchdb predict`
    flags it "dip"): grids whose rows map onto the same cache sets, often at
    powers of two (paper 003 §V: "pathological peaks and troughs").  Where the
    answer at --shape S rests on such a point, every padded shape S + p (each
    extent + 0..--pad) is predicted from the measurements without the dip, and
    those predicted faster than S are listed, least padding first, then fastest.
    "vs S" is the time over S's predicted time (below 1.00x: faster); a padded
    shape's time includes its extra points' work; a code that pads its arrays'
    leading dimension but computes only S's points does less work than that.

    --measure times S and the listed candidates on this machine, their passes
    interleaved so that a slow spell of the host falls on all of them, and
    prints the measured times beside the predictions.  The run is stored
    (tagged "advise"): its points join the data later predictions use.

    Examples:

      benchdb advise --kernel shallow.cu --shape 2048x2048

      benchdb advise -k stencil2d5 -s 1024x1024 --pad 4 --top 3 --measure

      benchdb advise -k shallow.cu -s 2048x2048 --machine node07 --json
    """
    from ..kernel_defs import builtin_definition
    from ..predict.advice import advise as find_advice
    from ..predict.basis import rate_basis
    from ..predict.lookup import prepare_lookup
    from ..predict.methods import METHODS
    from ..shapes import parse_shape

    METHODS.get(method)
    if threads < 1:
        raise UserError(f"--threads {threads} must be at least 1")
    if not 1 <= pad <= MAX_PAD:
        raise UserError(f"--pad {pad} must be between 1 and {MAX_PAD}, e.g. --pad 8")
    if top < 1:
        raise UserError(f"--top {top} must be at least 1, e.g. --top 5")
    # a built-in kernel is checked before the database is opened; a user's is defined by it
    database = None if builtin_definition(kernel) else open_db(db)
    basis = rate_basis(kernel, precision, database)
    query = parse_shape(shape, basis.geometry.ndim)
    if measure:  # can it be measured here at all? (before the database is opened)
        _plan(kernel, [query], threads, precision)
    database = database or open_db(db)
    lookup = prepare_lookup(
        database,
        kernel,
        method=method,
        threads=threads,
        precision=precision,
        machine=machine,
        host=host,
        basis=basis,
    )
    advice = find_advice(lookup, query, pad=pad, top=top)
    measured: dict[str, float] = {}
    run_id = None
    if measure and advice.candidates:
        shapes = [advice.query.shape, *(c.shape for c in advice.candidates)]
        run_id, measured = _measure(database, kernel, shapes, threads, precision, quiet=as_json)
    rows = _rows(advice, measured)
    if as_json:
        print_json(
            {
                "kernel": kernel,
                "shape": advice.query.key,
                "near_dip": advice.near_dip,
                "dips": list(advice.dips),
                "pad": advice.pad,
                "considered": advice.considered,
                "faster": advice.faster,
                "measured_run": run_id,
                "query": rows[0],
                "candidates": rows[1:],
                "lookup": lookup.describe(),
            }
        )
        return
    _print(advice, rows, measure=measure, run_id=run_id, label=_label(lookup))


def _label(lookup: Lookup) -> str:
    sel = lookup.selection
    return (
        f"{sel.threads} thread(s), {sel.precision}, {sel.context}: method {lookup.method.name}, "
        f"environment {sel.environment_id}, {sel.machine.scope.label}"
    )


def _plan(kernel: str, shapes: list[tuple[int, ...]], threads: int, precision: str) -> SweepPlan:
    """The interleaved sweep of ``kernel``'s benchmark at ``shapes``; UserError where it
    cannot run here (not a built-in or installed kernel, more threads than numba runs,
    too large for the memory)."""
    from ..collectors import plan as planning
    from ..machine import detect_machine
    from ..shapes import shape_key

    plan = planning.build_plan(
        detect_machine(),
        kernels=[kernel],
        sizes_spec=",".join(shape_key(s) for s in shapes),
        threads=planning.parse_threads(str(threads), planning.thread_limit()),
        precisions=[precision],
        passes=MEASURE_PASSES,
        catalog=planning.load_user_code([], []),
    )
    return replace(plan, mode=ADVISE_MODE, interleaved=True)


def _measure(
    database: Database,
    kernel: str,
    shapes: list[tuple[int, ...]],
    threads: int,
    precision: str,
    *,
    quiet: bool,
) -> tuple[int, dict[str, float]]:
    """Time ``shapes`` in one interleaved sweep; (run id, median time of ``kernel`` by
    shape key, valid measurements only)."""
    from ..collectors.sweep import SweepObserver, detect_context, run_sweep, verify_plan
    from ..db.measurements import measurements_frame
    from .collect_cmd import ProgressObserver

    plan = _plan(kernel, shapes, threads, precision)
    verify_plan(plan)
    observer = SweepObserver() if quiet else ProgressObserver()
    try:
        result = run_sweep(
            database,
            plan,
            tags=[MEASURE_TAG],
            observer=observer,
            context=detect_context(),
            verified=True,
        )
    finally:
        if isinstance(observer, ProgressObserver):
            observer.stop()
    frame = measurements_frame(
        database,
        kernels=[kernel],
        run_ids=[result.run_id],
        threads=[threads],
        precision=precision,
        valid_only=True,
    )
    times = dict(zip(frame["shape_key"], frame["t_median"].astype(float), strict=True))
    return result.run_id, times


def _rows(advice: Advice, measured: dict[str, float]) -> list[dict[str, Any]]:
    """S first, then the candidates: predictions, and measurements where taken."""
    q = advice.query
    base = measured.get(q.key)
    entries = [(q, (0,) * len(q.shape), 1.0), *((c, c.padding, c.ratio) for c in advice.candidates)]
    rows = []
    for entry, padding, ratio in entries:
        t = measured.get(entry.key)
        rows.append(
            {
                "shape": entry.key,
                "padding": list(padding),
                "time_s": entry.time_s,
                "ratio": ratio,
                "layer": entry.layer,
                "flags": entry.flags,
                "measured_time_s": t,
                "measured_ratio": t / base if t is not None and base else None,
            }
        )
    return rows


def _ratio(v: float) -> str:
    return f"{v:.2f}x"


def _print(
    advice: Advice, rows: list[dict[str, Any]], *, measure: bool, run_id: int | None, label: str
) -> None:
    q = advice.query
    if not advice.near_dip:
        flags = q.flags or "none"
        console.print(
            f"{advice.kernel} {q.key} is near no measured dip (flags of the points its answer "
            f"rests on: {flags}): no padding advised"
        )
        if measure:
            console.print(f"--measure: nothing measured, no dip near {q.key}")
        return
    console.print(
        f"{advice.kernel} {q.key} sits near the measured dip at {', '.join(advice.dips)}; "
        f"{advice.faster} of {advice.considered} paddings up to +{advice.pad} per extent are "
        "predicted faster without it"
    )
    columns: list[tuple[str, str, Any]] = [
        ("shape", "shape", None),
        ("padding", "padding", lambda p: ",".join(f"+{v}" for v in p)),
        ("time_s", "predicted", fmt_seconds),
        ("ratio", "vs S", _ratio),
        ("layer", "layer", None),
        ("flags", "flags", lambda v: v or ""),
    ]
    if run_id is not None:
        columns += [
            ("measured_time_s", "measured", fmt_seconds),
            ("measured_ratio", "measured vs S", _ratio),
        ]
    print_table(rows, columns, title=f"{advice.kernel}, {label}")
    notes = ["vs S: time / S's time, below 1.00x faster; S is predicted with its dip"]
    if not advice.candidates:
        notes.append("no padded shape is predicted faster than S: keep S or measure more sizes")
    if run_id is not None:
        notes.append(f"measured now in run {run_id} (tagged {MEASURE_TAG}), passes interleaved")
    elif measure:
        notes.append("--measure: nothing measured, no candidate to compare with S")
    for note in notes:
        console.print(f"[dim]{note}[/]")
