"""``benchdb validate``: how accurate are the predictions on this machine?"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from .common import DbOption, JsonOption, console, emit, open_db, print_json
from .predict_cmd import EnvOption, MachineOption, PrecisionOption, ThreadsOption


def _pct(v: Any) -> str:
    return f"{v:.2f}%"


def _worst(rows: list[dict[str, Any]]) -> str:
    return "; ".join(f"{w['shape']} {w['error_pct']:+.1f}%" for w in rows)


def validate(
    kernel: Annotated[
        list[str] | None, typer.Option("--kernel", "-k", help="Kernel(s) to check (default all).")
    ] = None,
    method: Annotated[
        list[str] | None,
        typer.Option(
            "--method",
            "-m",
            help="Methods/baselines (default all: linear, pchip, logcurve, eq5, roofline, escape).",
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
    environment: EnvOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Leave-one-out and independent-sweep errors of every method, beside the baselines.

    Errors are in predicted time, |T_pred / T_meas - 1|, in %.  LOO drops each
    interior measured footprint in turn and predicts it from the others.  The
    independent check fits on some runs and predicts the footprints of others
    that were not fitted: --fit-run/--check-run, else runs tagged `validation`
    (benchdb collect --tag validation) against the rest, else the latest run
    against the earlier ones.  `best` marks each kernel's most accurate method.

    Examples:

      benchdb collect                                     # the fitting sweep
      benchdb collect --kernels shallow --sizes 150x90,700x310,... --tag validation
      benchdb validate

      benchdb validate --kernel shallow.cu --fit-run 1 --check-run 3 --json
    """
    from rich.progress import Progress

    from ..predict.validate import validate as run_validation

    database = open_db(db)
    with Progress(console=console, transient=True, disable=as_json) as bar:
        task = bar.add_task("cross-validating", total=None)
        report = run_validation(
            database,
            machine=machine,
            kernels=kernel,
            methods=method,
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
    rows = [
        {
            "kernel": r["kernel"],
            "method": r["method"] + (" *" if r.get("best") else ""),
            "loo_n": r["loo"]["n"],
            "loo_med": r["loo"]["median_abs_pct"],
            "loo_p90": r["loo"]["p90_abs_pct"],
            "n": r["check"]["n"],
            "med": r["check"]["median_abs_pct"],
            "p90": r["check"]["p90_abs_pct"],
            "max": r["check"]["max_abs_pct"],
            "worst": _worst(r["check"]["worst"] or r["loo"]["worst"]),
        }
        for r in report["results"]
    ]
    emit(
        rows,
        [
            ("kernel", "kernel", None),
            ("method", "method (* best)", None),
            ("loo_n", "LOO n", str),
            ("loo_med", "LOO median", _pct),
            ("loo_p90", "LOO p90", _pct),
            ("n", "check n", str),
            ("med", "check median", _pct),
            ("p90", "check p90", _pct),
            ("max", "check max", _pct),
            ("worst", "worst points", None),
        ],
        as_json=False,
        title=(
            f"prediction error, |time| %, fit runs {report['fit_runs']} -> check runs "
            f"{report['check_runs']} ({report['split_rule']})"
        ),
    )
    console.print(
        "[dim]baselines (eq5, roofline, escape) are fitted per machine: their LOO columns "
        "are in-sample errors at the same points[/]"
    )
