"""``benchdb runs list``: the collection sessions stored, newest first."""

from __future__ import annotations

from typing import Annotated

import typer

from ..db.runs import stored_runs
from ..db.runstate import RUN_STATUSES
from ..errors import UserError
from .common import DbOption, HostOption, JsonOption, open_db, print_json, print_table
from .groups import HelpGroup

app = typer.Typer(help="List collection runs.", no_args_is_help=True, cls=HelpGroup)


@app.command("list")
def list_runs(
    machine: Annotated[
        str | None,
        typer.Option(
            help="Only runs of this node class: its id, fingerprint prefix or one of its "
            "hosts' names (`benchdb machine list`)."
        ),
    ] = None,
    host: HostOption = None,
    status: Annotated[
        str | None, typer.Option(help="Only runs in this state: " + ", ".join(RUN_STATUSES))
    ] = None,
    limit: Annotated[int, typer.Option(min=1, help="Show at most this many runs.")] = 20,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Runs with their state, size and sweep, newest first, with the host that ran
    each and its node class (the runs of a class pool in predict and compare).

    Listing writes nothing: a run of this host whose collector died (SIGKILL,
    power loss) shows as `running (stale)` (in JSON: "stale": true);
    `benchdb collect` with the same options marks it interrupted and continues it.

    Examples:

      benchdb runs list

      benchdb runs list --status interrupted --json

      benchdb runs list --machine node07          # every host of node07's class
    """
    if status is not None and status not in RUN_STATUSES:
        raise UserError(f"--status {status!r} is not one of {', '.join(RUN_STATUSES)}")
    rows = stored_runs(open_db(db), machine=machine, host=host, status=status, limit=limit)
    if as_json:
        print_json(rows)
        return
    print_table(
        [{**r, "status": r["status"] + (" (stale)" if r["stale"] else "")} for r in rows],
        [
            ("id", "run", None),
            ("status", "status", None),
            ("kind", "kind", None),
            ("hostname", "host", None),
            ("node_class_id", "class", None),
            ("mode", "sweep", None),
            ("measurements", "rows", None),
            ("started_at", "started", lambda t: t.strftime("%m-%d %H:%M")),
            ("tags", "tags", lambda t: ",".join(t) or "-"),
        ],
        title="runs (newest first)",
    )
