"""The root ``benchdb`` command and the entry point that maps errors to exit codes.

Exit status: 0 success, 1 a finding (e.g. ``compare`` found a regression),
2 bad input or an unusable database (one line on stderr, nothing written),
130 interrupted.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer
from rich.markup import escape

from ..errors import UserError
from .common import close_databases, err_console
from .lazy import LazyCommand, make_lazy_group

_DATA, _PREDICT, _TRACK, _MPI, _ADMIN = (
    "Measure",
    "Predict",
    "Track regressions",
    "Parallel runs",
    "Database and machine",
)

COMMANDS: dict[str, LazyCommand] = {
    "collect": LazyCommand(
        "collect_cmd",
        "collect",
        "Time the kernels across sizes on this machine and store every sample (start here).",
        _DATA,
    ),
    "refine": LazyCommand(
        "refine_cmd",
        "refine",
        "Measure more sizes where predictions miss by more than the noise (after collect).",
        _DATA,
    ),
    "kernels": LazyCommand(
        "kernels_cmd",
        "kernels",
        "List the kernels: built-in, plugins, your programs; versions, points measured.",
        _DATA,
    ),
    "runs": LazyCommand("runs_cmd", "app", "List collection runs.", _DATA),
    "measurements": LazyCommand("measurements_cmd", "app", "Read stored measurements.", _DATA),
    "export": LazyCommand(
        "transfer_cmd", "export", "Export measurements to CSV, Parquet or JSON.", _DATA
    ),
    "import": LazyCommand(
        "transfer_cmd",
        "import_",
        "Import an export file or another benchdb database (idempotent).",
        _DATA,
    ),
    "predict": LazyCommand(
        "predict_cmd",
        "predict",
        "Predict a loop's time at a problem size by memory-footprint lookup.",
        _PREDICT,
    ),
    "advise": LazyCommand(
        "advise_cmd",
        "advise",
        "Is a shape on a measured dip (cache thrashing)? Paddings predicted faster.",
        _PREDICT,
    ),
    "validate": LazyCommand(
        "validate_cmd",
        "validate",
        "Measure prediction accuracy (leave-one-out and independent sizes).",
        _PREDICT,
    ),
    "plot": LazyCommand(
        "plot_cmd", "app", "Performance curves, predicted vs measured, roofline.", _PREDICT
    ),
    "compare": LazyCommand(
        "compare_cmd",
        "compare",
        "Did a run get slower than its baseline? Exit 1 on a regression.",
        _TRACK,
    ),
    "ab": LazyCommand(
        "ab_cmd",
        "ab",
        "Measure a base and a change in one run (paired samples); exit 1 if slower.",
        _TRACK,
    ),
    "history": LazyCommand(
        "history_cmd", "history", "A kernel's times over runs, with change points.", _TRACK
    ),
    "baseline": LazyCommand(
        "baseline_cmd", "app", "Pin or show the baseline run per machine.", _TRACK
    ),
    "report": LazyCommand("report_cmd", "report", "Write a static HTML report.", _TRACK),
    "comm": LazyCommand(
        "comm_cmd", "app", "MPI communication: measure, fit models, predict.", _MPI
    ),
    "app": LazyCommand(
        "app_cmd",
        "app",
        "Whole parallel runs: the built-in shallow-water model or your MPI program.",
        _MPI,
    ),
    "slurm": LazyCommand(
        "slurm_cmd",
        "app",
        "On a Slurm cluster: collect on many nodes, measure communication across nodes.",
        _MPI,
    ),
    "scenario": LazyCommand(
        "scenario_cmd",
        "scenario",
        "Rank decompositions and rank counts by predicted time and energy.",
        _MPI,
    ),
    "db": LazyCommand(
        "db_cmd", "app", "Upgrade and inspect the schema; prune old samples, compact.", _ADMIN
    ),
    "machine": LazyCommand(
        "machine_cmd",
        "app",
        "This machine's node class and host; the classes and hosts a database holds.",
        _ADMIN,
    ),
}

app = typer.Typer(
    name="benchdb",
    help=(
        "Empirical performance lookup for stencil codes.\n\n"
        "Benchmark your loops across problem sizes on this machine, store every sample "
        "in a database, then look performance up by memory footprint (Osprey et al., "
        "HPCS 2014).\n\n"
        "Start with `benchdb collect --quick`, then `benchdb predict --kernel shallow.cu "
        "--shape 500x500`."
    ),
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    cls=make_lazy_group(COMMANDS),
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback()
def _root(
    ctx: typer.Context,
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            help="Database URL for every command (same as BENCHDB_URL).",
            rich_help_panel="Database",
        ),
    ] = None,
) -> None:
    """Global options; ``--db`` here applies to the subcommand."""
    ctx.call_on_close(close_databases)
    if db:
        os.environ["BENCHDB_URL"] = db


# click's UsageError, found through typer's public BadParameter: typer 0.12 depends on click,
# later versions vendor it, so the class lives in a different module in each.
_USAGE_ERROR: type[Exception] = next(
    c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError"
)


def _usage_line(exc: Exception) -> str:
    """A usage error as one line: what is wrong, then where the command's help is."""
    ctx = getattr(exc, "ctx", None)
    where = f"`{ctx.command_path} --help`" if ctx is not None else "`benchdb --help`"
    message = " ".join(exc.format_message().split())  # type: ignore[attr-defined]
    return f"{message.rstrip('.')}; see {where}"


def main() -> None:
    """Console-script entry point: exit status 2 and one line for any bad input."""
    try:
        code = app(prog_name="benchdb", standalone_mode=False)
    except _USAGE_ERROR as exc:
        _error(_usage_line(exc))
        sys.exit(2)
    except UserError as exc:
        _error(str(exc))
        sys.exit(2)
    except (KeyboardInterrupt, typer.Abort):
        err_console.print("interrupted")
        sys.exit(130)
    except Exception as exc:
        from ..db.engine import damage_found

        damage = damage_found(exc)
        if damage is None:
            raise
        _error(str(damage))
        sys.exit(2)
    sys.exit(code if isinstance(code, int) else 0)


def _error(message: str) -> None:
    err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
