"""``benchdb compare``: did the contender run get slower than the baseline run?"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import track

from ..config import project_config
from ..errors import UserError
from ..regress import DEFAULT_ALPHA, DEFAULT_THRESHOLD, RunComparison, compare_runs
from ..regress.compare import KERNEL_KEY
from ..units import fmt_change, fmt_interval, fmt_seconds
from ..verdicts import MOVED, Verdict
from .common import (
    DbOption,
    HostOption,
    JsonOption,
    MachineOption,
    console,
    err_console,
    finite,
    input_file,
    open_db,
    print_json,
    print_table,
)
from .compare_markdown import comparison_markdown

FORMATS = ("table", "json", "markdown")


def _point(row: dict) -> str:
    return f"{row['kernel']} {row['shape_key']} t{row['threads']} {row['precision']}"


def print_comparison(result: RunComparison, show_all: bool) -> None:
    """Environment differences, kernel verdicts and (changed) points as tables."""
    b, c = result.baseline, result.contender
    hosts = b["host"] if b["host"] == c["host"] else f"{b['host']} and {c['host']}"
    console.print(
        f"baseline run {b['run_id']} {b['tags'] or ''} vs contender run {c['run_id']} "
        f"{c['tags'] or ''} on {hosts} (node class {result.machine['node_class_id']}): "
        f"threshold {result.threshold:.0%}, alpha {result.alpha:g} "
        f"({1 - result.alpha:.0%} intervals)"
    )
    console.print("points: " + ", ".join(f"{n} {v}" for v, n in result.counts.items()))
    console.print("kernels: " + ", ".join(f"{n} {v}" for v, n in result.kernel_counts.items()))
    if result.kernel_thresholds:
        console.print(
            "per-kernel thresholds: "
            + ", ".join(f"{k} {v:.0%}" for k, v in sorted(result.kernel_thresholds.items()))
        )
    if result.only_baseline or result.only_contender:
        console.print(
            f"not compared: {result.only_baseline} point(s) only in the baseline, "
            f"{result.only_contender} only in the contender"
        )
    if result.environment_diff:
        print_table(
            result.environment_diff,
            [("field", "field", None), ("before", "baseline", None), ("after", "contender", None)],
            title="environment differences (often the cause)",
        )
    else:
        console.print("environment: identical")
    console.print(result.scatter_note)
    kernels = result.kernels.to_dict(orient="records")
    changed = any(k["version_change"] for k in kernels)
    if not show_all:
        kernels = [k for k in kernels if k["verdict"] != Verdict.UNCHANGED or k["version_change"]]
    per_kernel = bool(result.kernel_thresholds)
    if kernels:
        print_table(
            [{**k, "ci": fmt_interval(k["ci_low"], k["ci_high"])} for k in kernels],
            [
                ("kernel", "kernel", None),
                ("threads", "threads", None),
                ("precision", "precision", None),
                ("points", "points", None),
                ("slower", "slower", None),
                ("faster", "faster", None),
                ("noisy", "noisy", None),
                ("median_ratio", "change", fmt_change),
                ("ci", f"{1 - result.alpha:.0%} CI", None),
                *([("threshold", "threshold", lambda t: f"{t:.0%}")] if per_kernel else []),
                ("verdict", "kernel verdict", None),
                *([("version_change", "new version", None)] if changed else []),
            ],
            title="kernels: median change over the points and its interval "
            "(slower/faster: the interval excludes no change, the change exceeds the threshold)",
        )
    rows = result.results.to_dict(orient="records")
    if not show_all:  # the points that show where a kernel's change is (any, with --per-point)
        moved = result.kernels[result.kernels["verdict"].isin(list(MOVED))]
        changed_kernels = set(moved[KERNEL_KEY].itertuples(index=False, name=None))
        rows = [
            r
            for r in rows
            if r["verdict"] in MOVED
            and (result.per_point or tuple(r[k] for k in KERNEL_KEY) in changed_kernels)
        ]
    rows = [{**r, "point": _point(r), "ci": fmt_interval(r["ci_low"], r["ci_high"])} for r in rows]
    if rows:
        print_table(
            rows,
            [
                ("point", "point", None),
                ("baseline_median", "baseline", fmt_seconds),
                ("contender_median", "contender", fmt_seconds),
                ("ratio", "change", fmt_change),
                ("ci", f"{1 - result.alpha:.0%} CI", None),
                ("p_value", "p", lambda p: f"{p:.2g}"),
                ("verdict", "verdict", None),
            ],
            title=None
            if show_all
            else "slower/faster points of the changed kernels (--all shows every point)",
        )
    if len(result.regressions):
        found = sorted(set(result.regressions["kernel"]))
        console.print(f"[bold red]regression[/] in {', '.join(found)}")
    else:
        console.print("no regression")


def _settings(
    threshold: float | None, alpha: float | None, config: Path | None
) -> tuple[float, float, dict[str, float]]:
    """Threshold (fraction), alpha and per-kernel thresholds: options over the config file."""
    found = project_config(config).compare
    return (
        threshold / 100 if threshold is not None else found.threshold or DEFAULT_THRESHOLD,
        alpha if alpha is not None else found.alpha or DEFAULT_ALPHA,
        found.thresholds,
    )


def _format(fmt: str, as_json: bool) -> str:
    if fmt not in FORMATS:
        raise UserError(f"unknown --format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    if as_json and fmt not in ("table", "json"):
        raise UserError(f"--json and --format {fmt} contradict each other; give only one")
    return "json" if as_json else fmt


def compare(
    baseline: Annotated[
        str, typer.Argument(help="Baseline run: id, tag, latest, previous or baseline.")
    ],
    contender: Annotated[
        str, typer.Argument(help="Contender run: id, tag, latest, previous or baseline.")
    ] = "latest",
    threshold: Annotated[
        float | None,
        typer.Option(
            "--threshold",
            callback=finite,
            min=0.1,
            max=500.0,
            help="Smallest change reported, in percent: smaller changes count as unchanged. "
            f"Default: the config file's, else {DEFAULT_THRESHOLD:.0%}. Per-kernel thresholds "
            "in the config file still apply to their kernels.",
            show_default=False,
        ),
    ] = None,
    alpha: Annotated[
        float | None,
        typer.Option(
            "--alpha",
            callback=finite,
            min=1e-6,
            max=0.5,
            help="Significance level; the intervals are at 1-alpha. "
            f"Default: the config file's, else {DEFAULT_ALPHA:g}.",
            show_default=False,
        ),
    ] = None,
    show_all: Annotated[
        bool, typer.Option("--all", help="List every point, not only the changed ones.")
    ] = False,
    per_point: Annotated[
        bool,
        typer.Option(
            "--per-point",
            help="Fail on any slower point, not only on kernels slower over their points "
            "(for quiet dedicated machines).",
        ),
    ] = False,
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            help="table (for a terminal), json (for scripts; same as --json) or markdown "
            "(a pull-request comment: the verdict, then only the kernels that changed).",
        ),
    ] = "table",
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            callback=input_file("--config"),
            help="Settings file: a benchdb.toml, or a pyproject.toml with a tool.benchdb table. "
            "Default: the first of those in this directory or a parent.",
            show_default=False,
        ),
    ] = None,
    machine: MachineOption = None,
    host: HostOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Compare two runs; exit status 1 when a kernel got slower (for CI).

    Per point (kernel, shape, threads, precision, context): the ratio of
    median times (contender / baseline), its bootstrap interval and a
    Mann-Whitney U p-value.  A point is SLOWER (FASTER) when its samples are
    separated beyond --threshold, or the change is significant (p < alpha)
    and beyond the threshold; NOISY when a change that large cannot be ruled
    out; UNCHANGED otherwise.

    Per KERNEL (threads, precision, context), what fails CI: the median of
    its points' ratios with a two-level bootstrap interval (points resampled,
    and samples within them).  On a shared machine a burst of load slows one
    point's samples together, so the points, not the samples, are the
    evidence.  The kernel is SLOWER (FASTER) when its interval excludes no
    change and its median change exceeds the threshold, UNCHANGED when the
    whole interval lies within the threshold, NOISY otherwise.
    Two runs taken one after the other also differ by the host's drift:
    where the database holds other runs of the baseline's settings,
    environment and kernel versions (its replicates: collect the baseline
    three times), the scatter between them widens each kernel's interval.
    The environment differences of the two runs are listed: they are usually
    the cause.  Only runs of the same node class are compared (the same
    hardware: any of its hosts, before or after an OS update).  latest,
    previous and baseline are those of the class of --machine or --host,
    else of the other run named, else of this machine's class; --host takes
    latest and previous from that host only.

    Settings: --threshold and --alpha, else the project's config file
    (benchdb.toml, table compare; or pyproject.toml, table tool.benchdb.compare):
    threshold = 5 (percent), alpha = 0.01, and per kernel or pattern in the
    table compare.thresholds, e.g. "shallow.step" = 10 or "stream.*" = 8
    (README, "Track regressions").

    Exit status: 0 no regression, 1 regression found, 2 bad input.

    Examples:

        benchdb compare baseline latest

        benchdb compare 12 14 --threshold 10 --json

        benchdb compare main pr-42 --format markdown > comment.md

        benchdb compare gcc12 gcc13 --all

        benchdb compare baseline latest --host node07
    """
    out = _format(fmt, as_json)
    limit, level, per_kernel = _settings(threshold, alpha, config)
    database = open_db(db)
    result = compare_runs(
        database,
        baseline,
        contender,
        threshold=limit,
        alpha=level,
        kernel_thresholds=per_kernel,
        machine=machine,
        host=host,
        per_point=per_point,
        track=partial(track, console=err_console, transient=True, disable=out != "table"),
    )
    if out == "json":
        print_json(result.to_dict())
    elif out == "markdown":
        typer.echo(comparison_markdown(result), nl=False)
    else:
        print_comparison(result, show_all)
    if len(result.regressions):
        raise typer.Exit(code=1)
