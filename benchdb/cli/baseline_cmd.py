"""``benchdb baseline``: pin the run that ``compare baseline ...`` means, per node class."""

from __future__ import annotations

from typing import Annotated

import typer

from ..db.baseline import clean_reason, set_baseline, show_baselines
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
from .groups import HelpGroup

app = typer.Typer(
    help="Pin a baseline run per node class (what `benchdb compare baseline latest` compares to).",
    no_args_is_help=True,
    cls=HelpGroup,
)

COLUMNS = [
    ("node_class_id", "node class", None),
    ("hostname", "run's host", None),
    ("run_id", "run", None),
    ("tags", "tags", lambda t: ", ".join(t)),
    ("started_at", "run started", lambda d: d.strftime("%Y-%m-%d %H:%M")),
    ("git_commit", "commit", None),
    ("set_at", "pinned", lambda d: d.strftime("%Y-%m-%d %H:%M")),
    ("reason", "reason", None),
]


@app.command("set")
def set_(
    run: Annotated[str, typer.Argument(help="Run id, tag, latest or previous.")],
    reason: Annotated[
        str | None,
        typer.Option(
            "--reason",
            help="Why the baseline is (re)set, e.g. an accepted slowdown and its issue; "
            "`benchdb history` shows it at the step it explains.",
        ),
    ] = None,
    machine: MachineOption = None,
    host: HostOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Pin RUN as the baseline of its node class (replacing any earlier one).

    One baseline per node class, whichever host ran it: the nodes of a class
    are interchangeable, and `compare baseline latest` compares the class's
    newest run with it.  latest and previous are of --machine's class (of
    --host's runs with --host), else of this machine's class.

    Resetting the baseline accepts RUN's level as the new reference: after an
    intended slowdown, `compare baseline latest` stops failing on it.  Every
    pin is kept with its --reason; `benchdb history` lists the resets and
    marks the steps they explain.

    Examples:

        benchdb baseline set latest

        benchdb baseline set 12

        benchdb baseline set latest --reason "bounds checks on (#48): stencil2d5 +9%, accepted"

        benchdb baseline set release-1.0 --machine node07

        benchdb baseline set latest --host node07
    """
    clean_reason(reason)
    row = set_baseline(open_db(db, write=True), run, machine, host, reason)
    if as_json:
        print_json(row)
        return
    was = f" (was run {row['previous_run_id']})" if row["previous_run_id"] else ""
    why = f": {row['reason']}" if row["reason"] else ""
    console.print(
        f"baseline of node class {row['node_class_id']} is now run {row['run_id']}{was}{why} "
        f"(measured on {row['hostname']})"
    )


@app.command()
def show(
    machine: MachineOption = None,
    host: HostOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """List the pinned baseline of every node class (or of --machine's / --host's class).

    Example:

        benchdb baseline show --json
    """
    rows = show_baselines(open_db(db), machine, host)
    if not rows and not as_json:
        console.print("no baseline pinned; pin one with `benchdb baseline set RUN`")
        return
    emit(rows, COLUMNS, as_json=as_json, title="baselines")
