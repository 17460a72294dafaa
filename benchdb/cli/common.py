"""What every command shares: the ``--db`` and ``--json`` options and output.

Tables go to stdout through rich; ``--json`` prints the same rows as JSON with
stable field names and SI units, for scripts.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from ..db.engine import Database

# emoji=False: text benchdb prints (a user's tag, a range A:B:N) is shown as written,
# never with a code like :b: drawn as an emoji
console = Console(emoji=False)
err_console = Console(stderr=True, emoji=False)

DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        envvar="BENCHDB_URL",
        show_envvar=True,
        help="Database URL, e.g. sqlite:///results.sqlite or "
        "postgresql+psycopg://user@host/db, or the path of an SQLite file. Default: an "
        "SQLite file in your data directory.",
        rich_help_panel="Database",
    ),
]
JsonOption = Annotated[
    bool, typer.Option("--json", help="Print JSON (SI units) instead of a table.")
]
MachineOption = Annotated[
    str | None,
    typer.Option(
        "--machine",
        help="Node class whose hosts' data pool: its id, the name of any of its hosts, or a "
        "fingerprint prefix (`benchdb machine list`). Default: this machine's class.",
        rich_help_panel="Machine",
    ),
]
HostOption = Annotated[
    str | None,
    typer.Option(
        "--host",
        help="Only this host's data (its name, e.g. a Slurm node name, or id), not its "
        "whole node class.",
        rich_help_panel="Machine",
    ),
]


def open_db(url: str | None, *, create: bool = False, write: bool = False) -> Database:
    """Open the database, closed when the command ends; SQLAlchemy is imported here,
    not when the CLI starts.

    Only the commands that write results (``create=True``: collect, import, comm
    collect, app run and calibrate, machine register) may create a database; they and
    the others that store (``write=True``: baseline set, refine, collect --resume)
    refuse one they may not write, before anything is stored.
    """
    from ..db.engine import open_database

    database = open_database(url, create=create, write=write)
    _opened.append(database)
    return database


_opened: list[Database] = []
"""The databases this command opened, closed when it ends (:func:`close_databases`)."""


def close_databases() -> None:
    """Close every database the command opened: a command run in-process (a test, a
    notebook) leaves no connection behind to hold the file."""
    while _opened:
        _opened.pop().close()


def _jsonable(value: Any) -> Any:
    """What ``json.dumps`` cannot write itself: timestamps, numpy scalars, anything else as text."""
    if isinstance(value, datetime):
        return value.isoformat()
    if hasattr(value, "item"):
        return _finite(value.item())
    return str(value)


def _finite(value: Any) -> Any:
    """``value`` with every NaN or infinite float, at any depth, as None (JSON null).

    ``json.dumps`` writes floats itself, never through ``default``, so they are
    replaced before it sees them.
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    if getattr(value, "ndim", None) == 0:  # a numpy scalar
        return _finite(value.item())
    if getattr(value, "ndim", None):  # a numpy array
        return _finite(value.tolist())
    return value


def print_json(data: Any) -> None:
    """Machine-readable output: one JSON document on stdout (NaN and infinity as null)."""
    typer.echo(json.dumps(_finite(data), default=_jsonable, indent=2, allow_nan=False))


def print_table(
    rows: Sequence[Mapping[str, Any]],
    columns: Iterable[tuple[str, str, Callable[[Any], str] | None]],
    *,
    title: str | None = None,
) -> None:
    """A rich table: ``columns`` are (key, header, formatter or None)."""
    cols = list(columns)
    table = Table(title=title, header_style="bold")
    for _key, header, _fmt in cols:
        table.add_column(header, overflow="fold")
    for row in rows:
        table.add_row(
            *[
                (fmt or str)(row.get(key)) if row.get(key) is not None else "-"
                for key, _h, fmt in cols
            ]
        )
    _print_unsqueezed(table)


_UNBOUNDED = 1_000_000


def _print_unsqueezed(table: Table) -> None:
    """A terminal gets the table fitted to its width; a pipe, a file or a CI log gets
    it at its natural width, one line per row, so that no value is folded mid-token
    (rich would squeeze to 80 columns there) and ``grep`` finds whole rows."""
    if console.is_terminal:
        console.print(table)
        return
    natural = console.measure(table, options=console.options.update_width(_UNBOUNDED)).maximum
    Console(width=max(natural, console.width), emoji=False).print(table)


def emit(
    rows: Sequence[Mapping[str, Any]],
    columns: Iterable[tuple[str, str, Callable[[Any], str] | None]],
    *,
    as_json: bool,
    title: str | None = None,
) -> None:
    """Rows as a table, or as JSON with ``--json``."""
    if as_json:
        print_json(list(rows))
    else:
        print_table(rows, columns, title=title)
