"""``benchdb export`` and ``benchdb import``: move measurements between databases."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ..db.runs import run_exists
from ..db.scope import read_scope
from ..db.transfer import check_bundle, database_bundle, format_of, import_bundle, open_bundle
from ..db.transfer_read import Selection
from ..db.transfer_write import is_export, write_records
from ..errors import UserError
from ..outputs import check_out_file
from .common import DbOption, JsonOption, err_console, input_file, open_db, print_json, print_table
from .measurements_cmd import check_kernels, parse_run, split


class Reporter:
    """Progress of a long export or import on stderr, told ``(phase, done, total)``.

    On a terminal, a bar that clears itself when done.  Elsewhere (a log file, a CI
    job), a line every :data:`LINE_EVERY` seconds, the first once a phase has run
    that long: short work prints nothing.  ``enabled=False`` (``--json``): nothing.
    """

    LINE_EVERY = 2.0

    def __init__(self, enabled: bool) -> None:
        self.bar = enabled and err_console.is_terminal
        self.lines = enabled and not self.bar
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=err_console,
            transient=True,
            disable=not self.bar,
        )
        self.phase = ""
        self.task = None
        self.last = 0.0

    def __enter__(self) -> Reporter:
        self.progress.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.progress.stop()

    def __call__(self, phase: str, done: int, total: int | None) -> None:
        if phase != self.phase:
            self.phase, self.last = phase, time.monotonic()
            self.task = self.progress.add_task(f"{phase} measurements", total=total)
        self.progress.update(self.task, completed=done, total=total)
        if self.lines and time.monotonic() - self.last >= self.LINE_EVERY:
            self.last = time.monotonic()
            share = f" of {total:,} ({100 * done // max(total, 1)}%)" if total else ""
            err_console.print(f"{phase}: {done:,} measurements{share}", highlight=False)


def parse_since(text: str) -> datetime:
    """A ``--since`` date or time (ISO 8601; UTC unless it names its offset)."""
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise UserError(
            f"--since {text!r} is not a date; give e.g. 2026-01-31 or 2026-01-31T12:00"
        ) from None
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def export(
    out: Annotated[Path, typer.Option("--out", "-o", help="File to write.")],
    fmt: Annotated[
        str | None,
        typer.Option("--format", help="csv, parquet or json. Default: from the --out suffix."),
    ] = None,
    kernel: Annotated[
        list[str] | None, typer.Option("--kernel", "-k", help="Only these kernels (repeat or a,b).")
    ] = None,
    run: Annotated[
        list[str] | None, typer.Option(help="Only these run ids (repeat or 1,2).")
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(help="Only runs started on or after this date (UTC), e.g. 2026-01-31."),
    ] = None,
    machine: Annotated[
        str | None,
        typer.Option(
            help="Only this node class: its id, fingerprint prefix or one of its hosts' names."
        ),
    ] = None,
    host: Annotated[str | None, typer.Option(help="Only this host (name or id).")] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Replace --out even if it is not an earlier export.")
    ] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Write measurements, with their runs, kernels, machines and environments, to a file.

    JSON is JSON Lines: a header line, then one record a line. CSV and Parquet
    hold one row per measurement (load them with pandas). `benchdb import`
    reads all three back, and the files of older versions.

    Examples:

      benchdb export --out node07.parquet

      benchdb export --format csv --out triad.csv --kernel stream.triad --run 4

      benchdb export --out recent.json --host node07 --since 2026-01-01
    """
    fmt = format_of(out, fmt)
    check_out_file(out, force=force, ours=is_export)
    after = parse_since(since) if since is not None else None
    database = open_db(db)
    kernels = split(kernel)
    if kernels:
        check_kernels(database, kernels)
    run_ids = [r for r in (parse_run(text) for text in split(run)) if r is not None]
    unknown = [str(r) for r in run_ids if not run_exists(database, r)]
    if unknown:
        raise UserError(f"no run {', '.join(unknown)}; `benchdb runs list` shows the runs")
    scope = None
    if machine is not None or host is not None:
        scope = read_scope(database, machine, host)
    bundle = database_bundle(database, Selection(tuple(kernels), tuple(run_ids), scope, after))
    with Reporter(not as_json) as progress:
        counts = write_records(
            bundle.records(), out, fmt, replace=force, total=bundle.total, on_progress=progress
        )
    result = {"file": str(out), "format": fmt, **counts.__dict__}
    if as_json:
        print_json(result)
    else:
        typer.echo(
            f"wrote {counts.measurements} measurements of {counts.runs} run(s) to {out} ({fmt})"
        )


def import_(
    source: Annotated[
        str,
        typer.Argument(
            callback=input_file("SOURCE"),
            help="An export file (.csv, .parquet, .json), an SQLite file, or a database URL.",
        ),
    ],
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Add the measurements of an export file or another benchdb database to this one.

    Idempotent: rows are matched by fingerprint, name, run uuid and measured
    point, so importing the same data twice adds nothing. The source is read
    twice: first every row is checked, and a malformed file is refused with
    nothing written; then everything is added in one transaction, so an
    import that is interrupted adds nothing (run it again).

    Examples:

      benchdb import node07.parquet --db postgresql+psycopg://bench@db/bench

      benchdb import sqlite:////scratch/node07/benchdb.sqlite
    """
    with open_bundle(source) as bundle, Reporter(not as_json) as progress:
        checked = check_bundle(bundle, progress)  # every row, before the database is opened
        counts = import_bundle(open_db(db, create=True), checked, progress)
    result = counts.__dict__
    if as_json:
        print_json(result)
        return
    print_table(
        [{"what": k, "added": v} for k, v in result.items() if k != "measurements_present"],
        [("what", "rows", None), ("added", "added", None)],
        title=f"imported {source}",
    )
    typer.echo(f"{counts.measurements_present} measurement(s) were already present")
