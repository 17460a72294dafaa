"""``benchdb validate``: how accurate are the predictions on this machine?"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from ..units import fmt_ids
from .common import (
    DbOption,
    HostOption,
    JsonOption,
    MachineOption,
    console,
    emit,
    open_db,
    print_json,
)
from .measurements_cmd import split
from .predict_cmd import EnvOption, PrecisionOption, ThreadsOption


def _pct(v: Any) -> str:
    return f"{v:.2f}%"


def _worst(rows: list[dict[str, Any]]) -> str:
    return "; ".join(f"{w['shape']} {w['error_pct']:+.1f}%" for w in rows)


def _ratio(noise: dict[str, Any]) -> str:
    """``median, p90`` of error over a floor, '-' where there is none."""
    if noise["ratio_median"] is None or noise["ratio_p90"] is None:
        return "-"
    return f"{noise['ratio_median']:.2f}, {noise['ratio_p90']:.2f}"


def _floor(noise: dict[str, Any]) -> str:
    """``median, p90`` of a floor in %, with the points it rests on; '-' where none."""
    if noise["noise_median_pct"] is None or noise["noise_p90_pct"] is None:
        return "-"
    return f"{noise['noise_median_pct']:.2f}%, {noise['noise_p90_pct']:.2f}% (n {noise['n']})"


def _layers(counts: dict[str, int]) -> str:
    return " ".join(f"{k} {v}" for k, v in sorted(counts.items()))


def _table(report: dict[str, Any], part: str, title: str) -> None:
    """One table of ``part`` (``loo`` or ``check``) of every result."""
    rows = [
        {
            "kernel": r["kernel"],
            "method": r["method"] + (" *" if r.get("best") else ""),
            "n": r[part]["n"],
            "med": r[part]["median_abs_pct"],
            "p90": r[part]["p90_abs_pct"],
            "max": r[part]["max_abs_pct"],
            "noise_med": r[part]["noise"]["noise_median_pct"],
            "noise_p90": r[part]["noise"]["noise_p90_pct"],
            "ratio": _ratio(r[part]["noise"]),
            "retest": _floor(r[part]["retest"]),
            "retest_ratio": _ratio(r[part]["retest"]),
            "layers": _layers(r[part]["layers"]),
            "worst": _worst(r[part]["worst"]),
        }
        for r in report["results"]
    ]
    emit(
        rows,
        [
            ("kernel", "kernel", None),
            ("method", "method (* best)", None),
            ("n", "n", str),
            ("med", "error median", _pct),
            ("p90", "error p90", _pct),
            ("max", "error max", _pct),
            ("noise_med", "noise median", _pct),
            ("noise_p90", "noise p90", _pct),
            ("ratio", "error / noise median, p90", None),
            ("retest", "test-retest median, p90", None),
            ("retest_ratio", "error / test-retest median, p90", None),
            ("layers", "answered by", None),
            ("worst", "worst points", None),
        ],
        as_json=False,
        title=f"prediction error, |time| %: {title}",
    )


def validate(
    kernel: Annotated[
        list[str] | None,
        typer.Option("--kernel", "-k", help="Kernel(s) to check, repeated or a,b (default all)."),
    ] = None,
    method: Annotated[
        list[str] | None,
        typer.Option(
            "--method",
            "-m",
            help=(
                "Methods/baselines, repeated or a,b "
                "(default all: linear, pchip, logcurve, eq5, roofline, escape)."
            ),
        ),
    ] = None,
    fit_run: Annotated[
        list[int] | None, typer.Option("--fit-run", help="Run id(s) to fit on (repeatable).")
    ] = None,
    check_run: Annotated[
        list[int] | None, typer.Option("--check-run", help="Run id(s) to check against.")
    ] = None,
    threads: ThreadsOption = 1,
    precision: PrecisionOption = "float64",
    machine: MachineOption = None,
    host: HostOption = None,
    environment: EnvOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Leave-one-out and independent-sweep errors of what `predict` answers, beside
    the repeat noise of the same points and the baselines.

    Errors are in predicted time, |T_pred / T_meas - 1|, in %.  Each method is
    checked on predict's whole answer path: blocks with the shape's own rows,
    else the curve with the row-length correction, else the curve alone
    ("answered by" counts the layers).  Leave-one-out leaves each measured shape
    out in turn, refits every layer without it and predicts it.  The noise is
    the repeat noise of the same points, |T_b / T_a - 1| between their passes
    (collect --passes; a one-pass point compares the halves of its samples, a
    lower bound); "error / noise" divides the error's median by the noise's
    median and its p90 by the noise's p90: near 1, a prediction is as good as
    measuring the point again.  "test-retest" is the scatter of the same points
    between separate collections (each run's median against the next run's),
    where two or more measured them: what measuring the shape again later gives,
    the floor to judge a prediction against.  The independent check fits on some runs and
    predicts the shapes of others that were not fitted: --fit-run/--check-run,
    else runs tagged `validation` (benchdb collect --tag validation) against the
    rest, else the latest run
    against the earlier ones.  `best` marks each kernel's most accurate method.

    Examples:

      benchdb collect                                     # the fitting sweep
      benchdb collect --kernels shallow --sizes 150x90,700x310,... --tag validation
      benchdb validate

      benchdb validate --kernel shallow.cu --fit-run 1 --check-run 3 --json

      benchdb validate --host node07        # one node's points only, not its class's
    """
    from rich.progress import Progress

    from ..predict.validate import validate as run_validation

    database = open_db(db)
    with Progress(console=console, transient=True, disable=as_json) as bar:
        task = bar.add_task("cross-validating", total=None)
        report = run_validation(
            database,
            machine=machine,
            host=host,
            kernels=split(kernel) or None,
            methods=split(method) or None,
            threads=threads,
            precision=precision,
            environment_id=environment,
            fit_runs=fit_run,
            check_runs=check_run,
            progress=lambda k: bar.update(task, description=f"cross-validating {k}"),
        )
    if as_json:
        print_json(report)
        return
    _table(report, "loo", "leave-one-out over the answer path")
    if report["check_runs"]:
        _table(
            report,
            "check",
            f"independent check: fit runs {fmt_ids(report['fit_runs'])} -> check runs "
            f"{fmt_ids(report['check_runs'])} ({report['split_rule']})",
        )
    if not any(r[p]["retest"]["n"] for r in report["results"] for p in ("loo", "check")):
        console.print(
            "[dim]test-retest: no point was measured in two collections; collect the "
            "check shapes twice (benchdb collect --tag validation --sizes ..., run again) "
            "to see how far measuring again later moves them[/]"
        )
    console.print(
        "[dim]baselines (eq5, roofline, escape) are fitted per machine: their LOO columns "
        "are in-sample errors at the same points[/]"
    )
