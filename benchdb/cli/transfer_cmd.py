"""``benchdb export`` and ``benchdb import``: move measurements between databases."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..db.scope import read_scope
from ..db.transfer import (
    bundle_from_db,
    check_bundle,
    format_of,
    import_bundle,
    load_source,
    write_bundle,
)
from ..outputs import check_out_file, writing_out
from .common import DbOption, JsonOption, open_db, print_json, print_table
from .measurements_cmd import check_kernels, parse_run, split


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
    machine: Annotated[
        str | None,
        typer.Option(
            help="Only this node class: its id, fingerprint prefix or one of its hosts' names."
        ),
    ] = None,
    host: Annotated[str | None, typer.Option(help="Only this host (name or id).")] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Write measurements, with their runs, kernels, machines and environments, to a file.

    CSV and Parquet hold one row per measurement (load them with pandas);
    JSON holds one document. `benchdb import` reads all three back.

    Examples:

      benchdb export --out node07.parquet

      benchdb export --format csv --out triad.csv --kernel stream.triad --run 4

      benchdb export --out node07.json --host node07
    """
    fmt = format_of(out, fmt)
    check_out_file(out)
    database = open_db(db)
    kernels = split(kernel)
    if kernels:
        check_kernels(database, kernels)
    run_ids = [parse_run(r) for r in split(run)]
    scope = None
    if machine is not None or host is not None:
        scope = read_scope(database, machine, host)
    bundle = bundle_from_db(
        database,
        kernels=kernels or None,
        run_ids=[r for r in run_ids if r is not None] or None,
        scope=scope,
    )
    with writing_out(out):
        write_bundle(bundle, out, fmt)
    result = {
        "file": str(out),
        "format": fmt,
        "measurements": len(bundle.measurements),
        "runs": len(bundle.runs),
        "machines": len(bundle.machines),
    }
    if as_json:
        print_json(result)
    else:
        typer.echo(
            f"wrote {result['measurements']} measurements of {result['runs']} run(s) "
            f"to {out} ({fmt})"
        )


def import_(
    source: Annotated[
        str,
        typer.Argument(
            help="An export file (.csv, .parquet, .json), an SQLite file, or a database URL."
        ),
    ],
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Add the measurements of an export file or another benchdb database to this one.

    Idempotent: rows are matched by fingerprint, name, run uuid and measured
    point, so importing the same data twice adds nothing. Everything is added
    in one transaction: a malformed file is refused and nothing is written.

    Examples:

      benchdb import node07.parquet --db postgresql+psycopg://bench@db/bench

      benchdb import sqlite:////scratch/node07/benchdb.sqlite
    """
    bundle, origin = load_source(source)
    checked = check_bundle(bundle, origin)  # every row, before the database is opened
    counts = import_bundle(open_db(db, create=True), checked, origin)
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
