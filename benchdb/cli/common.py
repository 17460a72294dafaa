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


def _checked_db(ctx: typer.Context, value: str | None) -> str | None:
    """``--db`` (or BENCHDB_URL, or the default) refused as it is parsed, before the
    command does any work (compiles a kernel, reads an import, runs a program), where
    no command could use it: in memory, no regular file, no SQLite file, damaged,
    another application's.  What depends on the command (must it exist, be writable)
    is checked when it is opened (:func:`open_db`)."""
    if ctx.resilient_parsing:  # shell completion: nothing is run
        return value
    from ..db.engine import check_target, resolve_url

    check_target(resolve_url(value), create=True, write=False)
    return value


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
        callback=_checked_db,
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
ForceOption = Annotated[
    bool,
    typer.Option("--force", help="Replace a file already there even if benchdb did not write it."),
]


def _unchanged(param: typer.CallbackParam, value: Any) -> Any:
    """What a checking callback hands back: ``value``, or an empty tuple for a repeatable
    option not given.  Typer before 0.16 converts an absent repeatable option to ``None``
    before the callback and then takes the ``len`` of what the callback returned."""
    return () if value is None and param.multiple else value


def finite(param: typer.CallbackParam, value: Any) -> Any:
    """Typer callback for a float option where infinity or NaN means nothing (a time
    budget, a threshold, a scale): refused while the command line is parsed, before any
    database is opened or run created; ``None`` and numbers pass, lists item by item."""
    items = value if isinstance(value, list | tuple) else [value]
    bad = next((v for v in items if isinstance(v, float) and not math.isfinite(v)), None)
    if bad is not None:
        raise typer.BadParameter(f"{bad} is not a finite number; give one such as 10 or 0.5")
    return _unchanged(param, value)


def input_file(option: str, *, module_ok: bool = False) -> Callable[[Any], Any]:
    """Typer callback for an option naming a file benchdb reads: a FIFO, a device or a
    folder is refused while the command line is parsed, before anything is opened (a FIFO
    would hang the read).  A value that is not an existing path (a module name, a URL, a
    bundled name) passes: its reader explains it."""
    from ..inputs import check_input_files

    def check(param: typer.CallbackParam, value: Any) -> Any:
        if value is not None:
            items = value if isinstance(value, list | tuple) else [value]
            check_input_files([str(v) for v in items], option, module_ok=module_ok)
        return _unchanged(param, value)

    return check


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
