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

from ..errors import UserError
from . import db_cmd, machine_cmd
from .common import err_console

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
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback()
def _root(
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
    if db:
        os.environ["BENCHDB_URL"] = db


app.add_typer(db_cmd.app, name="db")
app.add_typer(machine_cmd.app, name="machine")


def main() -> None:
    """Console-script entry point."""
    try:
        app()
    except UserError as exc:
        err_console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        sys.exit(2)
    except KeyboardInterrupt:
        err_console.print("interrupted")
        sys.exit(130)
