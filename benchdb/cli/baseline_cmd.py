"""``benchdb baseline``: pin the run that ``compare baseline ...`` means, per machine."""

from __future__ import annotations

from typing import Annotated

import typer

from ..regress import set_baseline, show_baselines
from .common import DbOption, JsonOption, console, emit, open_db, print_json
from .compare_cmd import MachineOption

app = typer.Typer(
    help="Pin a baseline run per machine (what `benchdb compare baseline latest` compares to).",
    no_args_is_help=True,
)

COLUMNS = [
    ("machine_id", "machine", None),
    ("hostname", "host", None),
    ("run_id", "run", None),
    ("tags", "tags", lambda t: ", ".join(t)),
    ("started_at", "run started", lambda d: d.strftime("%Y-%m-%d %H:%M")),
    ("git_commit", "commit", None),
    ("set_at", "pinned", lambda d: d.strftime("%Y-%m-%d %H:%M")),
]


@app.command("set")
def set_(
    run: Annotated[str, typer.Argument(help="Run id, tag, latest or previous.")],
    machine: MachineOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Pin RUN as the baseline of its machine (replacing any earlier one).

    Examples:

        benchdb baseline set latest

        benchdb baseline set 12

        benchdb baseline set release-1.0 --machine node07
    """
    row = set_baseline(open_db(db), run, machine)
    if as_json:
        print_json(row)
    else:
        console.print(f"baseline of machine {row['hostname']} is now run {row['run_id']}")


@app.command()
def show(machine: MachineOption = None, db: DbOption = None, as_json: JsonOption = False) -> None:
    """List the pinned baseline of every machine (or of --machine).

    Example:

        benchdb baseline show --json
    """
    rows = show_baselines(open_db(db), machine)
    if not rows and not as_json:
        console.print("no baseline pinned; pin one with `benchdb baseline set RUN`")
        return
    emit(rows, COLUMNS, as_json=as_json, title="baselines")
