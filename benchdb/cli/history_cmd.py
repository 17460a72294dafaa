"""``benchdb history``: a kernel's times over runs, with change points."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from ..db.baseline import baseline_changes
from ..regress import DETECTORS, get_detector, kernel_history
from ..regress.detectors.detector import DEFAULT_MIN_CHANGE
from ..regress.detectors.zscore import Z_THRESHOLD
from ..units import fmt_bytes, fmt_seconds
from .common import (
    DbOption,
    HostOption,
    JsonOption,
    MachineOption,
    console,
    finite,
    open_db,
    print_json,
    print_table,
)

DEFAULT_LAST = 1000
"""Runs a history reads unless told: months of CI; a year of it is --last 0."""


def _env_text(diff: list[dict[str, Any]]) -> str:
    if not diff:
        return "same environment"
    return "; ".join(f"{d['field']}: {d['before']} -> {d['after']}" for d in diff)


def _change_text(step: dict[str, Any]) -> str:
    """The kernel's new version (changed code), the environment's differences, then a
    baseline reset there and its reason (a step someone accepted)."""
    text = _env_text(step["environment_diff"])
    if step["version_change"]:
        text = f"kernel version {step['version_change']}; {text}"
    reset = step.get("baseline_reset")
    if reset:
        text += f"; baseline reset to run {reset['run_id']}: {reset['reason'] or 'no reason given'}"
    return text


def history(
    kernel: Annotated[str, typer.Option("--kernel", "-k", help="Kernel name, e.g. shallow.cu.")],
    shape: Annotated[
        str | None, typer.Option("--shape", help="Only this shape, e.g. 200x200.")
    ] = None,
    threads: Annotated[int | None, typer.Option("--threads", min=1, help="Only this.")] = None,
    precision: Annotated[
        str | None, typer.Option("--precision", help="Only this (float64, float32).")
    ] = None,
    context: Annotated[
        str | None, typer.Option("--context", help="Only this (fullstep, isolated).")
    ] = None,
    detector: Annotated[
        str,
        typer.Option(
            "--detector",
            help=f"Change-point detector: {' or '.join(DETECTORS.names())}.",
        ),
    ] = "potts",
    min_change: Annotated[
        float,
        typer.Option(
            "--min-change", callback=finite, min=0.1, help="Smallest step reported, in percent."
        ),
    ] = DEFAULT_MIN_CHANGE * 100,
    z_threshold: Annotated[
        float,
        typer.Option(
            "--z-threshold", callback=finite, min=0.5, help="zscore detector: |z| above this."
        ),
    ] = Z_THRESHOLD,
    last: Annotated[
        int,
        typer.Option(
            "--last", min=0, help="The newest N runs that measured the kernel; 0: every run."
        ),
    ] = DEFAULT_LAST,
    machine: MachineOption = None,
    host: HostOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show a kernel's median time per run and the steps in it, with what changed there.

    One series per (shape, threads, precision, context), oldest run first,
    over the newest --last runs (1000; 0: all) of every host of the node
    class (--host: of one host).
    Detectors (thresholds documented in benchdb.regress.detectors):

    potts: L1 piecewise-constant fit, number of steps by asv's information
    criterion (beta = 4); a level must hold for 2 runs; steps under
    --min-change are not reported.

    zscore: each run against the mean of the runs since the last step, in
    units of the pooled residual spread (Conbench's lookback z-score, lookback
    100 runs); a step where |z| > --z-threshold (5) and the change exceeds
    --min-change.  Judges a single new run.

    For each step: the run it starts at and the environment change from the
    run before (versions, threading layer, NUMBA_/OMP_ variables, commit),
    and a baseline reset there with its reason (`benchdb baseline set RUN
    --reason ...`).  The machine's baseline resets are listed below the steps.

    Examples:

        benchdb history --kernel shallow.cu

        benchdb history --kernel stream.triad --shape 1000000 --detector zscore --json

        benchdb history --kernel shallow.cu --host node07

        benchdb history --kernel stream.triad --last 0   # every run, a year of CI
    """
    params: dict[str, Any] = {"min_change": min_change / 100}
    if detector == "zscore":
        params["z_threshold"] = z_threshold
    found = get_detector(detector, **params)
    database = open_db(db)
    scope, series = kernel_history(
        database,
        kernel,
        shape=shape,
        threads=threads,
        precision=precision,
        context=context,
        machine=machine,
        host=host,
        detector=found,
        last=last or None,
    )
    resets = baseline_changes(database, scope["node_class_id"])
    if as_json:
        print_json(
            {
                "machine": scope,
                "kernel": kernel,
                "detector": {"name": found.name, **params},
                "baseline_changes": resets,
                "series": [s.to_dict() for s in series],
            }
        )
        return
    summary = [
        {
            "shape": s.shape_key,
            "threads": s.threads,
            "precision": s.precision,
            "context": s.context,
            "footprint": s.footprint_bytes,
            "runs": len(s.values),
            "first": s.values["t_median"].iloc[0],
            "latest": s.values["t_median"].iloc[-1],
            "steps": ", ".join(f"run {st['run_id']} {st['change']:+.1%}" for st in s.steps) or "-",
        }
        for s in series
    ]
    print_table(
        summary,
        [
            ("shape", "shape", None),
            ("threads", "threads", None),
            ("precision", "precision", None),
            ("context", "context", None),
            ("footprint", "footprint", fmt_bytes),
            ("runs", "runs", None),
            ("first", "first median", fmt_seconds),
            ("latest", "latest median", fmt_seconds),
            ("steps", f"steps ({found.name})", None),
        ],
        title=f"{kernel} on {scope['label']}",
    )
    if len(series) == 1:
        print_table(
            series[0].values.to_dict(orient="records"),
            [
                ("run_id", "run", None),
                ("run_started_at", "started", lambda d: d.strftime("%Y-%m-%d %H:%M:%S")),
                ("run_tags", "tags", lambda t: ", ".join(t)),
                ("host", "host", None),
                ("environment_id", "env", None),
                ("kernel_version", "version", lambda v: v[:8]),
                ("t_median", "median", fmt_seconds),
                ("t_cv", "CV", lambda c: f"{c:.1%}"),
            ],
        )
    steps = [
        {
            "shape": s.shape_key,
            "threads": s.threads,
            **st,
            "env": _change_text(st),
        }
        for s in series
        for st in s.steps
    ]
    if steps:
        print_table(
            steps,
            [
                ("shape", "shape", None),
                ("threads", "threads", None),
                ("previous_run_id", "from run", None),
                ("run_id", "to run", None),
                ("change", "change", lambda c: f"{c:+.1%}"),
                ("direction", "", None),
                ("env", "what changed", None),
            ],
            title="steps",
        )
    else:
        console.print(f"no step larger than {min_change:g}% found")
    if resets:
        print_table(
            resets,
            [
                ("set_at", "reset", lambda d: d.strftime("%Y-%m-%d %H:%M")),
                ("previous_run_id", "from run", None),
                ("run_id", "to run", None),
                ("run_tags", "tags", lambda t: ", ".join(t)),
                ("reason", "reason", None),
            ],
            title=f"baseline resets of {scope['label']}",
        )
