"""``benchdb db``: create and upgrade the schema (alembic, packaged migrations); prune
old runs' raw samples and compact the database (:mod:`benchdb.db.prune`)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated

import typer

from ..bounds import parse_run_id
from ..db.engine import (
    check_reachable,
    check_target,
    make_engine,
    redact,
    resolve_url,
    writing,
)
from ..db.migrate import current_revision, ensure_schema, head_revision
from ..db.prune import (
    BATCH_RUNS,
    DEFAULT_OLDER_THAN,
    CompactReport,
    PruneReport,
    compact_database,
    parse_cutoff,
    prune_samples,
)
from ..units import fmt_bytes
from .common import DbOption, JsonOption, err_console, open_db, print_json
from .groups import HelpGroup

app = typer.Typer(
    help="Create, upgrade and inspect the database schema; prune old samples and compact.",
    no_args_is_help=True,
    cls=HelpGroup,
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


def _ids(ids: tuple[int, ...], shown: int = 6) -> str:
    """Run ids for a line of text: the first few and how many (``--json`` lists all)."""
    listed = ", ".join(map(str, ids[:shown]))
    return listed if len(ids) <= shown else f"{listed} ... ({len(ids)} runs)"


def _prune_text(report: PruneReport) -> str:
    verb = "would prune" if report.dry_run else "pruned"
    line = (
        f"{verb} the raw samples of {report.runs} run(s) started before "
        f"{report.cutoff:%Y-%m-%d %H:%M} UTC: {report.points} points, {report.samples} samples "
        f"(and {report.set_aside} set aside), {fmt_bytes(report.json_bytes)} of JSON"
    )
    kept = "; ".join(f"{why} {_ids(ids)}" for why, ids in report.kept.items())
    if kept:
        line += f"\nkept the samples of old runs: {kept}"
    if report.already:
        line += f"\n{report.already} old run(s) were pruned before"
    if report.dry_run:
        return line + "\nnothing changed (--dry-run)"
    return line + ("\nrun `benchdb db compact` to give the space back" if report.runs else "")


@app.command()
def prune(
    older_than: Annotated[
        str,
        typer.Option(
            help="Prune runs started longer ago than this: an age in days, weeks or years "
            "(90d, 12w, 1y) or a date (2025-06-30).",
        ),
    ] = DEFAULT_OLDER_THAN,
    keep: Annotated[
        list[str] | None,
        typer.Option(help="Keep this run's samples (its id; repeatable)."),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say what would be pruned; change nothing.")
    ] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Drop the raw samples of runs older than --older-than (default 90d), keeping every
    point's statistics.

    What goes is each sample and what the operating system saw while it ran.  Each
    point keeps its median, minimum, IQR, CV, rates and flags: `history`, `predict`'s
    times and `compare` of runs that kept their samples answer as before (`predict`'s
    spread pools the samples still stored; `compare` of a pruned run says it was).
    A run keeps its samples while something needs them: a baseline, now or ever
    (`benchdb baseline set`); one side of an unfinished `benchdb ab` pair; an
    unfinished run that `collect` would continue; a run named with --keep.  Runs are
    pruned 200 to a transaction: an interrupted prune leaves each run whole or pruned,
    and running it again continues.  `benchdb db compact` then returns the space.

    Examples:

      benchdb db prune --dry-run

      benchdb db prune --older-than 26w --keep 412 --keep 977

      benchdb db prune --older-than 2025-01-01 --json && benchdb db compact
    """
    cutoff = parse_cutoff(older_than)
    keep_ids = {parse_run_id(k, "--keep") for k in keep or []}
    database = open_db(db, write=not dry_run)

    def progress(done: int, todo: int) -> None:
        if todo > BATCH_RUNS:
            err_console.print(f"{done}/{todo} runs", highlight=False)

    report = prune_samples(database, cutoff, keep=keep_ids, dry_run=dry_run, progress=progress)
    if as_json:
        print_json(asdict(report))
        return
    typer.echo(_prune_text(report))


def _compact_text(report: CompactReport) -> str:
    freed = report.bytes_before - report.bytes_after
    line = f"{report.backend}: {fmt_bytes(report.bytes_before)} -> {fmt_bytes(report.bytes_after)}"
    if freed > 0:
        line += f" ({fmt_bytes(freed)} returned)"
    if report.backend == "postgresql" and not report.full:
        line += (
            "\nPostgreSQL keeps the freed space for new rows; --full returns it to the file "
            "system, locking each table while it runs"
        )
    return line


@app.command()
def compact(
    full: Annotated[
        bool,
        typer.Option(
            "--full",
            help="PostgreSQL: rewrite the tables so their files shrink (locks each table "
            "while it runs). SQLite always rewrites its file.",
        ),
    ] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Return the space freed by `benchdb db prune` and refresh the query planner's
    statistics.

    SQLite: checkpoint the WAL, VACUUM (it rewrites the file: it needs that much free
    disk again and waits for writers to finish) and ANALYZE.  PostgreSQL: VACUUM
    (ANALYZE) of benchdb's tables, which leaves the space to new rows without stopping
    writers; --full also shrinks the files.  Prints the bytes before and after.

    Examples:

      benchdb db compact

      benchdb db compact --db postgresql+psycopg://bench@dbhost/bench --full --json
    """
    report = compact_database(open_db(db, write=True), full=full)
    if as_json:
        print_json(asdict(report))
        return
    typer.echo(_compact_text(report))
