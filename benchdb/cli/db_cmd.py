"""``benchdb db``: create and upgrade the schema (alembic, packaged migrations)."""

from __future__ import annotations

import typer

from ..db.engine import (
    check_reachable,
    check_target,
    make_engine,
    redact,
    resolve_url,
    writing,
)
from ..db.migrate import current_revision, ensure_schema, head_revision
from .common import DbOption, JsonOption, print_json
from .groups import HelpGroup

app = typer.Typer(
    help="Create, upgrade and inspect the database schema.", no_args_is_help=True, cls=HelpGroup
)


@app.command()
def upgrade(db: DbOption = None) -> None:
    """Create the schema, or bring it to this benchdb's revision."""
    url = resolve_url(db)
    check_target(url, create=True, write=True)
    engine = make_engine(url)
    check_reachable(engine, url)
    ensure_schema(writing(engine), url, upgrade=True)
    typer.echo(f"{redact(url)} is at revision {current_revision(engine)} (head)")


@app.command()
def current(db: DbOption = None, as_json: JsonOption = False) -> None:
    """Show the database's schema revision beside the code's (creates nothing)."""
    url = resolve_url(db)
    check_target(url, create=False, write=False)
    engine = make_engine(url)
    check_reachable(engine, url)
    cur, head = current_revision(engine), head_revision()
    if as_json:
        print_json({"url": redact(url), "current": cur, "head": head, "up_to_date": cur == head})
        return
    state = "up to date" if cur == head else "run `benchdb db upgrade`"
    typer.echo(f"{redact(url)}: revision {cur or 'none (empty)'}; code head {head} ({state})")
