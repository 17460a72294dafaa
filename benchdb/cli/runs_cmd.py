"""``benchdb runs list``: the collection sessions stored, newest first."""

from __future__ import annotations

from typing import Annotated

import typer
from sqlalchemy import func, select

from ..db.models import RUN_STATUSES, Machine, Measurement, Run
from ..errors import UserError
from ..query import resolve_machine
from ..runs import is_stale
from .common import DbOption, JsonOption, open_db, print_json, print_table

app = typer.Typer(help="List collection runs.", no_args_is_help=True)


@app.command("list")
def list_runs(
    machine: Annotated[
        str | None,
        typer.Option(help="Only runs of this machine (id, hostname or fingerprint prefix)."),
    ] = None,
    status: Annotated[
        str | None, typer.Option(help="Only runs in this state: " + ", ".join(RUN_STATUSES))
    ] = None,
    limit: Annotated[int, typer.Option(min=1, help="Show at most this many runs.")] = 20,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Runs with their state, size and sweep, newest first.

    Listing writes nothing: a run of this host whose collector died (SIGKILL,
    power loss) shows as `running (stale)` (in JSON: "stale": true);
    `benchdb collect` with the same options marks it interrupted and continues it.

    Examples:

      benchdb runs list

      benchdb runs list --status interrupted --json
    """
    if status is not None and status not in RUN_STATUSES:
        raise UserError(f"--status {status!r} is not one of {', '.join(RUN_STATUSES)}")
    database = open_db(db)
    counts = (
        select(Measurement.run_id, func.count().label("n")).group_by(Measurement.run_id).subquery()
    )
    stmt = (
        select(Run, Machine.hostname, func.coalesce(counts.c.n, 0))
        .join(Machine, Run.machine_id == Machine.id)
        .outerjoin(counts, counts.c.run_id == Run.id)
        .order_by(Run.id.desc())
        .limit(limit)
    )
    with database.reading() as s:
        if machine is not None:
            stmt = stmt.where(Run.machine_id == resolve_machine(s, machine).id)
        if status is not None:
            stmt = stmt.where(Run.status == status)
        rows = [
            {
                "id": r.id,
                "status": r.status,
                "stale": is_stale(r),
                "kind": r.kind,
                "machine_id": r.machine_id,
                "hostname": host,
                "environment_id": r.environment_id,
                "mode": (r.config or {}).get("mode"),
                "planned_points": len((r.config or {}).get("points", [])) or None,
                "measurements": n,
                "started_at": r.started_at,
                "ended_at": r.ended_at,
                "tags": list(r.tags or []),
                "uuid": (r.config or {}).get("uuid"),
            }
            for r, host, n in s.execute(stmt)
        ]
    if as_json:
        print_json(rows)
        return
    print_table(
        [{**r, "status": r["status"] + (" (stale)" if r["stale"] else "")} for r in rows],
        [
            ("id", "run", None),
            ("status", "status", None),
            ("kind", "kind", None),
            ("hostname", "machine", None),
            ("mode", "sweep", None),
            ("measurements", "rows", None),
            ("started_at", "started", lambda t: t.strftime("%m-%d %H:%M")),
            ("tags", "tags", lambda t: ",".join(t) or "-"),
        ],
        title="runs (newest first)",
    )
