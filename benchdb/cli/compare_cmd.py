"""``benchdb compare``: did the contender run get slower than the baseline run?"""

from __future__ import annotations

from functools import partial
from typing import Annotated

import numpy as np
import typer
from rich.progress import track

from ..regress import DEFAULT_ALPHA, DEFAULT_THRESHOLD, RunComparison, compare_runs
from ..regress.compare import NOISE_Z
from ..units import fmt_seconds
from .common import DbOption, JsonOption, console, err_console, open_db, print_json, print_table

MachineOption = Annotated[
    str | None,
    typer.Option(
        "--machine",
        help="Machine (id, hostname or fingerprint prefix) for latest/previous/baseline. "
        "Default: the machine of the other run named, else this machine.",
    ),
]


def _pct(x: float) -> str:
    return f"{(x - 1) * 100:+.1f}%"


def _point(row: dict) -> str:
    return f"{row['kernel']} {row['shape_key']} t{row['threads']} {row['precision']}"


def print_comparison(result: RunComparison, show_all: bool) -> None:
    """Environment differences, kernel verdicts and (changed) points as tables."""
    b, c = result.baseline, result.contender
    console.print(
        f"baseline run {b['run_id']} {b['tags'] or ''} vs contender run {c['run_id']} "
        f"{c['tags'] or ''} on {result.machine['hostname']}: threshold "
        f"{result.threshold:.0%}, alpha {result.alpha:g}"
    )
    console.print("points: " + ", ".join(f"{n} {v}" for v, n in result.counts.items()))
    console.print(
        f"run-to-run noise: sigma {result.noise_sigma:.3f} (log ratio), so a point's change "
        f"must exceed {_pct(float(np.exp(NOISE_Z * result.noise_sigma)))} to count"
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
    kernels = result.kernels.to_dict(orient="records")
    changed = any(k["version_change"] for k in kernels)
    if not show_all:
        kernels = [k for k in kernels if k["verdict"] != "unchanged" or k["version_change"]]
    if kernels:
        print_table(
            kernels,
            [
                ("kernel", "kernel", None),
                ("threads", "threads", None),
                ("precision", "precision", None),
                ("points", "points", None),
                ("slower", "slower", None),
                ("faster", "faster", None),
                ("noisy", "noisy", None),
                ("median_ratio", "median change", _pct),
                ("verdict", "kernel verdict", None),
                *([("version_change", "new version", None)] if changed else []),
            ],
            title="kernels (a verdict needs most of a kernel's points to agree)",
        )
    rows = result.results.to_dict(orient="records")
    if not show_all:
        rows = [r for r in rows if r["verdict"] in ("slower", "faster")]
    rows = [
        {**r, "point": _point(r), "ci": f"{_pct(r['ci_low'])}..{_pct(r['ci_high'])}"} for r in rows
    ]
    if rows:
        print_table(
            rows,
            [
                ("point", "point", None),
                ("baseline_median", "baseline", fmt_seconds),
                ("contender_median", "contender", fmt_seconds),
                ("ratio", "change", _pct),
                ("ci", f"{1 - result.alpha:.0%} CI", None),
                ("p_value", "p", lambda p: f"{p:.2g}"),
                ("verdict", "verdict", None),
            ],
            title=None if show_all else "slower/faster points (--all shows every point)",
        )
    if len(result.regressions):
        found = sorted(set(result.regressions["kernel"]))
        console.print(f"[bold red]regression[/] in {', '.join(found)}")
    else:
        console.print("no regression")


def compare(
    baseline: Annotated[
        str, typer.Argument(help="Baseline run: id, tag, latest, previous or baseline.")
    ],
    contender: Annotated[
        str, typer.Argument(help="Contender run: id, tag, latest, previous or baseline.")
    ] = "latest",
    threshold: Annotated[
        float,
        typer.Option(
            "--threshold",
            min=0.1,
            max=500.0,
            help="Smallest change reported, in percent: smaller changes count as unchanged.",
        ),
    ] = DEFAULT_THRESHOLD * 100,
    alpha: Annotated[
        float,
        typer.Option(
            "--alpha",
            min=1e-6,
            max=0.5,
            help="Significance level of the Mann-Whitney U test (the CI is at 1-alpha).",
        ),
    ] = DEFAULT_ALPHA,
    show_all: Annotated[
        bool, typer.Option("--all", help="List every point, not only the changed ones.")
    ] = False,
    per_point: Annotated[
        bool,
        typer.Option(
            "--per-point",
            help="Fail on any slower point, not only on kernels slower at most of their shapes.",
        ),
    ] = False,
    machine: MachineOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Compare two runs point by point; exit status 1 when the contender is slower (for CI).

    Per (kernel, shape, threads, precision, context): the ratio of median times
    (contender / baseline), its bootstrap confidence interval and a Mann-Whitney
    U p-value over the stored samples.  A point is SLOWER or FASTER only when
    the change is both significant (p < alpha) and larger than --threshold;
    NOISY when a change that large cannot be ruled out (the interval crosses the
    threshold, or a point's CV is above 10 %); UNCHANGED otherwise.  A KERNEL
    (per threads, precision, context) is slower when most of its points are
    slower and their median change exceeds the threshold: on a shared machine
    a burst of load slows one point's samples together, a real regression
    shows across sizes.  And a point must change by more than 3 run-to-run
    noise deviations (the robust spread of all points' ratios).  Exit status
    follows the kernels (--per-point: the points).  The environment differences
    of the two runs are listed: they are usually the cause.  Only runs of the
    same machine are compared.

    Exit status: 0 no regression, 1 regression found, 2 bad input.

    Examples:

        benchdb compare baseline latest

        benchdb compare 12 14 --threshold 10 --json

        benchdb compare gcc12 gcc13 --all
    """
    database = open_db(db)
    result = compare_runs(
        database,
        baseline,
        contender,
        threshold=threshold / 100,
        alpha=alpha,
        machine=machine,
        per_point=per_point,
        track=partial(track, console=err_console, transient=True, disable=as_json),
    )
    if as_json:
        print_json(result.to_dict())
    else:
        print_comparison(result, show_all)
    if len(result.regressions):
        raise typer.Exit(code=1)
