"""Retention: drop the raw samples of old runs, keep their point statistics; compact.

A year of CI history holds about 10^7 samples, and with what the operating system saw
during each (``evidence``) and the samples set aside as disturbed they are most of a
run's bytes (docs/findings/pruning.md).  ``benchdb db prune`` empties ``samples``,
``evidence`` and ``set_aside`` of the points (``measurement`` and
``comm_measurement``) of every complete run started before a cutoff, unless the run
is still needed:

* a node class's current baseline, or a run that ever was one (``baseline_change``):
  ``compare baseline ...`` bootstraps its samples, and a reset may be undone;
* one side of an open A/B pair (``benchdb ab``: a side whose partner is unfinished),
  which the same ``ab`` command continues and judges from paired samples;
* an unfinished run (running, interrupted, failed), which ``collect`` or
  ``--resume`` continues by appending samples to its points;
* a run the user names (``--keep``).

Every statistic stays (``t_min``, ``t_median``, ``t_iqr``, ``t_cv``, rates, flags,
``valid``, ``passes``), and so does ``pass_counts``, filled in where a row predates it,
so a pruned point still says how many samples it had
(:func:`benchdb.validity.samples_pruned`).  ``run.samples_pruned_at`` records when;
a reader that needs the samples themselves names the run and the date
(:func:`require_samples`) instead of reading empty lists.

Runs are pruned in batches of :data:`BATCH_RUNS`, one transaction each, chosen by
keyset on ``run.id``: memory and the time a writer waits stay bounded at 10^5 runs,
and an interrupted prune leaves each run either untouched or pruned and marked.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from enum import StrEnum
from typing import Any

from sqlalchemy import ColumnElement, Text, cast, exists, func, or_, select, text, update
from sqlalchemy.orm import Session

from ..errors import UserError
from ..evidence import set_aside_count
from .engine import Database
from .models import Base, Baseline, BaselineChange, CommMeasurement, Measurement, Run
from .runstate import RunStatus, utcnow

DEFAULT_OLDER_THAN = "90d"
"""The default age: a quarter of CI history keeps its samples for ``compare`` and ``ab``."""

BATCH_RUNS = 200
"""Runs per transaction: a writer (a collector committing a point) waits for one batch."""

_UNITS = {"d": 1, "w": 7, "y": 365}
_AGE = re.compile(r"(-?\d+)\s*([dwy])")
_EMPTIED = {"samples": [], "evidence": {}, "set_aside": {}}
_EMPTY_TEXT = sum(len(v) for v in ("[]", "{}", "{}"))  # what an emptied row still holds

Progress = Callable[[int, int], None]
"""Called after each batch with (runs done, runs to do)."""


class Reason(StrEnum):
    """Why an old run keeps its samples (the keys of :attr:`PruneReport.kept`)."""

    BASELINE = "baseline"
    AB = "open A/B"
    UNFINISHED = "unfinished"
    NAMED = "--keep"


@dataclass(frozen=True)
class PruneReport:
    """What a prune dropped (or, with ``dry_run``, would drop).

    ``json_bytes`` is the text the emptied columns held (what the rows no longer
    store); the database file or relations shrink by that only after
    :func:`compact_database`.  ``kept`` lists the old runs kept, by reason (a run kept
    for two reasons is under both); ``already`` counts old runs pruned before.
    """

    cutoff: datetime
    dry_run: bool
    runs: int
    points: int
    samples: int
    set_aside: int
    json_bytes: int
    kept: dict[Reason, tuple[int, ...]] = field(default_factory=dict)
    already: int = 0


@dataclass(frozen=True)
class CompactReport:
    """The database's size before and after :func:`compact_database` (bytes: SQLite's
    pages, PostgreSQL's benchdb relations with their indexes and TOAST)."""

    backend: str
    bytes_before: int
    bytes_after: int
    full: bool


def parse_cutoff(value: str, now: datetime | None = None) -> datetime:
    """The instant before which runs count as old: ``now`` minus an age (``90d``,
    ``12w``, ``1y``) or midnight UTC of a date (``2025-06-30``)."""
    now = now or utcnow()
    found = _AGE.fullmatch(value.strip())
    if found:
        amount = int(found[1])
        if amount < 0:
            raise UserError(f"--older-than {value}: an age cannot be negative; give e.g. 90d")
        return now - timedelta(days=amount * _UNITS[found[2]])
    try:
        day = date.fromisoformat(value.strip())
    except ValueError:
        raise UserError(
            f"--older-than {value!r} is neither an age nor a date; give e.g. 90d, 12w, 1y "
            "or 2025-06-30"
        ) from None
    cutoff = datetime(day.year, day.month, day.day, tzinfo=UTC)
    if cutoff > now:
        raise UserError(f"--older-than {value} is in the future; give a past date or an age")
    return cutoff


def check_runs_exist(db: Database, run_ids: Collection[int]) -> None:
    """UserError naming the first of ``run_ids`` the database lacks (a ``--keep`` typo
    must not leave the run it meant unprotected)."""
    with db.reading() as s:
        found = set(s.scalars(select(Run.id).where(Run.id.in_(list(run_ids)))))
    missing = sorted(set(run_ids) - found)
    if missing:
        raise UserError(
            f"--keep {missing[0]}: no such run; `benchdb runs list` shows the runs (nothing pruned)"
        )


def _has_points() -> ColumnElement[bool]:
    return or_(
        exists().where(Measurement.run_id == Run.id),
        exists().where(CommMeasurement.run_id == Run.id),
    )


def _baseline() -> ColumnElement[bool]:
    """Runs pinned as a baseline now or ever (either side of a recorded change)."""
    return or_(
        exists().where(Baseline.run_id == Run.id),
        exists().where(BaselineChange.run_id == Run.id),
        exists().where(BaselineChange.previous_run_id == Run.id),
    )


def _old(cutoff: datetime) -> list[ColumnElement[bool]]:
    """Runs started before ``cutoff`` that hold points and were not pruned."""
    return [Run.started_at < cutoff, Run.samples_pruned_at.is_(None), _has_points()]


def _prunable(cutoff: datetime, keep: Collection[int]) -> list[ColumnElement[bool]]:
    """Old runs that no rule but an open A/B pair keeps (that one is read per batch)."""
    return [
        *_old(cutoff),
        Run.status == RunStatus.COMPLETE,
        ~_baseline(),
        Run.id.not_in(list(keep)),
    ]


def _candidates(
    s: Session, cutoff: datetime, keep: Collection[int], after: int, limit: int
) -> list[tuple[int, dict]]:
    """(id, config) of the next ``limit`` prunable runs past ``after``, by id."""
    stmt = (
        select(Run.id, Run.config)
        .where(*_prunable(cutoff, keep), Run.id > after)
        .order_by(Run.id)
        .limit(limit)
    )
    return [(run_id, config or {}) for run_id, config in s.execute(stmt)]


def _open_pairs(s: Session, runs: Sequence[tuple[int, dict]]) -> set[int]:
    """The runs of ``runs`` that are one side of an A/B pair whose other side is
    unfinished: ``benchdb ab`` continues the pair and judges both sides' samples."""
    partner = {
        run_id: str(config["ab"]["pair"])
        for run_id, config in runs
        if isinstance(config.get("ab"), dict) and config["ab"].get("pair")
    }
    if not partner:
        return set()
    unfinished = set(
        s.scalars(
            select(Run.uuid).where(
                Run.uuid.in_(set(partner.values())), Run.status != RunStatus.COMPLETE
            )
        )
    )
    return {run_id for run_id, uuid in partner.items() if uuid in unfinished}


def _kept(s: Session, cutoff: datetime, keep: Collection[int]) -> dict[Reason, tuple[int, ...]]:
    """The old, unpruned runs a fixed rule keeps, by reason (few: baselines, unfinished
    runs, named ones)."""
    rules = {
        Reason.BASELINE: _baseline(),
        Reason.UNFINISHED: Run.status != RunStatus.COMPLETE,
        Reason.NAMED: Run.id.in_(list(keep)),
    }
    found = {
        reason: tuple(s.scalars(select(Run.id).where(*_old(cutoff), rule).order_by(Run.id)))
        for reason, rule in rules.items()
    }
    return {reason: ids for reason, ids in found.items() if ids}


def _json_bytes(*columns: ColumnElement[Any]) -> ColumnElement[int]:
    return sum((func.coalesce(func.length(cast(c, Text)), 0) for c in columns), start=0)


@dataclass
class _Tally:
    """What some runs' points held (the counts of :class:`PruneReport`)."""

    runs: int = 0
    points: int = 0
    samples: int = 0
    set_aside: int = 0
    json_bytes: int = 0

    def add(self, other: _Tally) -> None:
        for name, value in other.__dict__.items():
            setattr(self, name, getattr(self, name) + value)


def _prune_rows(s: Session, table: type[Base], run_ids: list[int], write: bool) -> _Tally:
    """Count what the points of ``run_ids`` in ``table`` hold and, with ``write``, empty
    them (a measurement keeps its pass sizes in ``pass_counts``)."""
    has_counts = table is Measurement
    rows = s.execute(
        select(
            table.id,
            func.coalesce(func.json_array_length(table.samples), 0),
            _json_bytes(table.samples, table.evidence, table.set_aside),
            table.set_aside,
            *((table.pass_counts,) if has_counts else ()),
        ).where(table.run_id.in_(run_ids))
    ).all()
    tally = _Tally(
        points=len(rows),
        samples=sum(r[1] for r in rows),
        set_aside=sum(set_aside_count(r[3]) for r in rows),
        json_bytes=sum(r[2] for r in rows) - _EMPTY_TEXT * len(rows),
    )
    if write and rows:
        s.execute(update(table).where(table.run_id.in_(run_ids)).values(**_EMPTIED))
        counted = [(r[0], r[4], _counts(r[1], r[4])) for r in rows] if has_counts else []
        filled = [{"id": i, "pass_counts": new} for i, old, new in counted if new != old]
        if filled:  # rows that did not count their samples per pass
            s.execute(update(Measurement), filled)
    return tally


def _counts(n: int, counts: list | None) -> list[int]:
    """What a pruned row keeps in ``pass_counts``: how many samples each pass held, or
    all ``n`` in one group where the row did not count them per pass (as
    :func:`benchdb.predict.noise.pass_sizes` reads a row whose counts do not add up)."""
    counts = list(counts or [])
    return counts if n == 0 or sum(counts) == n else [n]


def _prune_batch(s: Session, run_ids: list[int], write: bool) -> _Tally:
    tally = _Tally(runs=len(run_ids))
    for table in (Measurement, CommMeasurement):
        tally.add(_prune_rows(s, table, run_ids, write))
    if write:
        s.execute(update(Run).where(Run.id.in_(run_ids)).values(samples_pruned_at=utcnow()))
    return tally


def prune_samples(
    db: Database,
    cutoff: datetime,
    *,
    keep: Collection[int] = (),
    dry_run: bool = False,
    batch: int = BATCH_RUNS,
    progress: Progress | None = None,
) -> PruneReport:
    """Drop the raw samples of the complete runs started before ``cutoff`` that nothing
    needs (module docstring); ``dry_run`` counts the same and changes nothing."""
    keep = set(keep)
    check_runs_exist(db, keep)
    with db.reading() as s:
        todo = s.scalar(select(func.count()).where(*_prunable(cutoff, keep)))
        kept = _kept(s, cutoff, keep)
        already = s.scalar(
            select(func.count()).where(Run.started_at < cutoff, Run.samples_pruned_at.is_not(None))
        )
    total, paired, after = _Tally(), [], 0
    while True:
        with db.reading() if dry_run else db.session() as s:
            runs = _candidates(s, cutoff, keep, after, batch)
            if not runs:
                break
            after = runs[-1][0]
            open_ab = _open_pairs(s, runs)
            paired.extend(sorted(open_ab))
            total.add(_prune_batch(s, [r for r, _ in runs if r not in open_ab], not dry_run))
        if progress is not None:
            progress(total.runs + len(paired), todo)
    if paired:
        kept[Reason.AB] = tuple(paired)
    return PruneReport(cutoff, dry_run, **total.__dict__, kept=kept, already=already)


def pruned_runs(db: Database, run_ids: Iterable[int]) -> dict[int, datetime]:
    """When each of ``run_ids`` whose samples were pruned lost them."""
    with db.reading() as s:
        return dict(
            s.execute(
                select(Run.id, Run.samples_pruned_at).where(
                    Run.id.in_(list(run_ids)), Run.samples_pruned_at.is_not(None)
                )
            ).all()
        )


def pruned_note(run_id: int, when: datetime) -> str:
    """The words every reader uses for a pruned run."""
    return f"run {run_id}'s raw samples were pruned on {when:%Y-%m-%d} (benchdb db prune)"


def require_samples(db: Database, run_ids: Iterable[int], fix: str) -> None:
    """UserError if any of ``run_ids`` was pruned: for a reader that judges the raw
    samples (a bootstrap, a rank test), whose ``fix`` says what to do instead."""
    pruned = pruned_runs(db, run_ids)
    if pruned:
        first = min(pruned)
        raise UserError(f"{pruned_note(first, pruned[first])}; {fix}")


def database_bytes(db: Database) -> int:
    """What the database occupies: SQLite's pages (``page_count x page_size``, the main
    file without its WAL), or PostgreSQL's benchdb tables with indexes and TOAST."""
    with db.engine.connect() as conn:
        if db.backend == "sqlite":
            pages = conn.exec_driver_sql("PRAGMA page_count").scalar_one()
            return int(pages) * int(conn.exec_driver_sql("PRAGMA page_size").scalar_one())
        names = [t.name for t in Base.metadata.sorted_tables]
        sizes = conn.execute(
            text(
                "SELECT pg_total_relation_size(to_regclass(n)) "
                "FROM unnest(CAST(:names AS text[])) AS n"
            ),
            {"names": names},
        )
        return int(sum(size or 0 for (size,) in sizes))


def compact_database(db: Database, *, full: bool = False) -> CompactReport:
    """Give the space pruned rows freed back and refresh the planner's statistics.

    SQLite: fold the WAL into the file (``wal_checkpoint(TRUNCATE)``), ``VACUUM``
    (rewrites the file without free pages: it needs as much free disk again and
    waits for other writers), ``ANALYZE``.  PostgreSQL: ``VACUUM (ANALYZE)`` of the
    benchdb tables, which makes the space reusable by new rows without locking
    writers out; ``full`` rewrites the tables (``VACUUM (FULL, ANALYZE)``) so the
    files shrink, holding an exclusive lock on each table while it does.
    """
    before = database_bytes(db)
    if db.backend == "sqlite":
        _vacuum_sqlite(db)
    else:
        _vacuum_postgres(db, full)
    return CompactReport(db.backend, before, database_bytes(db), full)


def _vacuum_sqlite(db: Database) -> None:
    raw = db.engine.raw_connection()  # autocommit (engine.py): VACUUM runs in no transaction
    try:
        cur = raw.cursor()
        for statement in ("PRAGMA wal_checkpoint(TRUNCATE)", "VACUUM", "ANALYZE"):
            cur.execute(statement)
        cur.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        cur.close()
    finally:
        raw.close()


def _vacuum_postgres(db: Database, full: bool) -> None:
    options = "FULL, ANALYZE" if full else "ANALYZE"
    with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        for table in Base.metadata.sorted_tables:
            conn.exec_driver_sql(f'VACUUM ({options}) "{table.name}"')
