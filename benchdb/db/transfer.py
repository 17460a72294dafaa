"""Moving measurements between databases: export files and idempotent import.

A compute node collects into its own SQLite file; ``benchdb import`` brings
that file (or an export of it) into the shared PostgreSQL.  Importing is
idempotent -- the same data imported twice adds nothing -- because every row
is matched by a natural key, never by its database id (the records and keys:
:mod:`benchdb.db.transfer_records`): a host and an environment by fingerprint
(a host written before node classes, format 1 or 2, is given its class and
host fingerprint as migration 0006 gives old rows), a kernel by name and
version (one written before kernels had versions is a built-in kernel,
versioned as migration 0004 does), a run by its uuid (the indexed
``run.uuid``), a measurement by its point (run, kernel, shape, threads,
precision, context).

Both directions stream, in bounded memory at any size.  ``export`` writes as
it reads (:mod:`~benchdb.db.transfer_read`, :mod:`~benchdb.db.transfer_write`).
``import`` reads its source twice: a first pass types every record against
the ORM columns and the rules ``collect`` keeps (:mod:`benchdb.validity`),
keeping only the keys it has seen, so that a malformed file is refused with
one line before the database is opened; the second pass writes, in batches,
in one transaction, so that an import that fails or is killed leaves the
database as it was.  Communication measurements and fitted models are not
part of an export.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import JSON, Boolean, DateTime, Float, Integer, String, insert, select
from sqlalchemy.exc import DBAPIError, StatementError
from sqlalchemy.orm import Session

from ..errors import UserError
from ..hashing import content_hash
from ..node_class import class_fields, host_fingerprint
from ..validity import measurement_problem
from .engine import SQLITE_SUFFIXES, Database, open_database
from .models import Base, Environment, Kernel, Machine, Measurement, NodeClass, Run
from .repo import get_or_create
from .runs import new_run_row
from .transfer_read import BATCH, Selection, count_measurements, database_records, file_records
from .transfer_records import (
    ENTITY_SKIP,
    FORMATS,
    KINDS,
    LINKS,
    Record,
    kernel_key,
    measurement_kernel,
)
from .transfer_write import Progress

if TYPE_CHECKING:
    import pandas as pd

T = TypeVar("T")


def run_key(run: Run) -> str:
    """The run's natural key across databases: its uuid."""
    return run.uuid


def plain(value: Any) -> Any:
    """A column value as JSON holds it: timestamps as ISO text, NaN as null, tuples as lists."""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, tuple):
        return list(value)
    return value


def frame_records(frame: pd.DataFrame, columns: Sequence[str]) -> list[dict[str, Any]]:
    """Rows of a :func:`~benchdb.db.measurements.measurements_frame` as JSON-able dicts:
    NaN -> None, tuples -> lists, timestamps -> ISO text."""
    return [
        {k: plain(v) for k, v in row.items()} for row in frame[list(columns)].to_dict("records")
    ]


def format_of(path: Path, fmt: str | None = None) -> str:
    """The file format: ``fmt`` if given, else from the suffix; UserError otherwise."""
    if fmt is not None:
        if fmt not in FORMATS.values():
            raise UserError(f"unknown format {fmt!r}; use csv, parquet or json")
        return fmt
    try:
        return FORMATS[path.suffix.lower()]
    except KeyError:
        raise UserError(
            f"cannot tell the format of {path.name!r} from its suffix; name it .csv, .parquet "
            "or .json, or pass --format"
        ) from None


# ---------------------------------------------------------------- sources


@dataclass(frozen=True)
class Bundle:
    """Measurements with everything they refer to: a stream of records, read anew by
    each call of ``records`` (an import reads it twice).  ``total``: the number of
    measurements, where known before reading them (a database's)."""

    origin: str
    records: Callable[[], Iterator[Record]]
    total: int | None = None


def database_bundle(db: Database, selection: Selection | None = None) -> Bundle:
    """The measurements of ``selection`` (all by default) in ``db``, and their entities."""
    chosen = selection or Selection()
    return Bundle(
        db.display_url,
        lambda: database_records(db, chosen),
        count_measurements(db, chosen),
    )


def read_bundle(path: Path) -> Bundle:
    """An export file; UserError (nothing written) when its format is unknown.  Its
    content is checked as it is read (:func:`check_bundle`)."""
    fmt = format_of(path)
    return Bundle(str(path), lambda: file_records(path, fmt))


@contextmanager
def open_bundle(source: str) -> Iterator[Bundle]:
    """The bundle of an export file, an SQLite file or a database URL (opened to read,
    never upgraded, for the block)."""
    path = Path(source).expanduser()
    if "://" not in source and path.suffix.lower() in SQLITE_SUFFIXES:
        if not path.is_file():
            raise UserError(f"no such file {source}; give an export file or a database URL")
        source = f"sqlite:///{path.resolve()}"
    if "://" in source:
        other = open_database(source, upgrade=False, create=False)
        try:
            yield database_bundle(other)
        finally:
            other.close()
        return
    if not path.is_file():
        raise UserError(f"no such file {source}; give an export file or a database URL")
    yield read_bundle(path)


def _why(exc: BaseException) -> str:
    """The first line of an exception's message (its type when it has none)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _malformed(origin: str, why: str) -> UserError:
    return UserError(
        f"{origin} is not a valid benchdb export ({why}); nothing was imported -- "
        "re-create it with `benchdb export`"
    )


def _guarded(items: Iterator[T], origin: str) -> Iterator[T]:
    """``items``, with what reading and checking them raises as one UserError line; an
    error of the code consuming them is left as it is."""
    try:
        yield from items
    except OSError as exc:
        raise UserError(f"cannot read {origin}: {exc.strerror or exc}") from exc
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise _malformed(origin, _why(exc)) from exc
    except Exception as exc:  # pyarrow's errors do not share a base class with ValueError
        if type(exc).__module__.startswith("pyarrow"):
            raise _malformed(origin, _why(exc)) from exc
        raise


# ---------------------------------------------------------------- checking


# Run columns newer than format 3: a file written before them lacks them (None then).
_ADDED_SINCE_3 = {"samples_pruned_at"}


@dataclass(frozen=True)
class _Column:
    """How a record's field becomes a column's value, worked out once per table."""

    key: str
    name: str  # table.column, as messages say it
    nullable: bool
    optional: bool  # may be absent: from a file written before the column existed
    text: bool  # "" is a value of a text column, an empty field of any other
    convert: Callable[[Any, str], Any]


@functools.cache
def _columns(model: type[Base], skip: frozenset[str]) -> tuple[_Column, ...]:
    return tuple(
        _Column(
            col.key,
            f"{model.__tablename__}.{col.key}",
            bool(col.nullable),
            col.server_default is not None or col.key in _ADDED_SINCE_3,
            isinstance(col.type, String),
            _converter(col.type),
        )
        for col in model.__table__.columns
        if col.key not in skip
    )


def _coerce(model: type[Base], rec: dict, skip: set[str]) -> dict[str, Any]:
    """``rec``'s fields typed as ``model``'s columns (from JSON, CSV text or Parquet)."""
    out: dict[str, Any] = {}
    for col in _columns(model, frozenset(skip)):
        if col.key not in rec:
            if col.optional:
                continue  # its default fills it
            raise ValueError(f"{model.__tablename__} record lacks {col.key!r}")
        value = rec[col.key]
        empty = value is None or (type(value) is float and math.isnan(value))
        if empty or (value == "" and not col.text):
            if not col.nullable:
                raise ValueError(f"{col.name} is empty")
            out[col.key] = None
        else:
            out[col.key] = col.convert(value, col.name)
    return out


def _converter(coltype: Any) -> Callable[[Any, str], Any]:
    if isinstance(coltype, JSON):
        return _json_value
    if isinstance(coltype, Boolean):
        return _bool_value
    if isinstance(coltype, Integer):
        return _int_value
    if isinstance(coltype, Float):
        return _float_value
    if isinstance(coltype, DateTime):
        return _time_value
    return _text_value


def _json_value(value: Any, name: str) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def _bool_value(value: Any, name: str) -> bool:
    if isinstance(value, str):
        if value.lower() not in ("true", "false", "1", "0"):
            raise ValueError(f"{name} is not a boolean: {value!r}")
        return value.lower() in ("true", "1")
    return bool(value)


def _int_value(value: Any, name: str) -> int:
    if type(value) is int:
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)  # exact beyond 2**53, where a float is not
    number = _float_value(value, name)
    if not number.is_integer():
        raise ValueError(f"{name} is not an integer: {value!r}")
    return int(number)


def _float_value(value: Any, name: str) -> float:
    if type(value) is float:
        return value
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} is not a number: {value!r}") from None


def _time_value(value: Any, name: str) -> datetime:
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str):
        raise ValueError(f"{name} is not a time: {value!r}")
    return datetime.fromisoformat(value)


def _text_value(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{name} is not text: {value!r}")
    return value


@dataclass(frozen=True)
class Row:
    """A record typed against its table: ``fields`` ready to store, ``key`` its natural
    key, ``refs`` the keys of the rows it refers to."""

    kind: str  # node_class, or one of KINDS
    key: str
    fields: dict[str, Any]
    refs: tuple[str, ...] = ()


def _host_and_class(rec: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A machine record typed as a host and its node class.

    A record written before node classes (formats 1 and 2) describes a machine
    by the fingerprint of that time; its class and host fingerprint are
    derived as migration 0006 derives them for the rows of an old database.
    """
    nested = rec.get("node_class")
    host = _coerce(Machine, {k: v for k, v in rec.items() if k != "node_class"}, ENTITY_SKIP)
    if nested is None:
        fields = class_fields(host)
        nested = {**fields, "fingerprint": content_hash(fields)}
        host["fingerprint"] = host_fingerprint(nested["fingerprint"], host["hostname"])
    return host, _coerce(NodeClass, nested, ENTITY_SKIP)


class _Checker:
    """Types each record and checks that it refers only to records before it in the
    stream; keeps the keys it has seen, never rows.  ``judge``: hold each measurement
    to the rules ``collect`` keeps (the first pass; the second, writing, was preceded
    by it)."""

    def __init__(self, judge: bool = True) -> None:
        self.judge = judge
        self.keys: dict[str, set[str]] = {kind: set() for kind in KINDS[:4]}
        self.measurements = 0
        self.due: dict[str, int] = {}  # run key -> measurements its record says are to come

    def rows(self, records: Iterator[Record]) -> Iterator[Row]:
        for kind, rec in records:
            if kind == "machine":
                host, node_class = _host_and_class(rec)
                yield Row("node_class", node_class["fingerprint"], node_class)
                yield self._keep(
                    Row("machine", rec["fingerprint"], host, (node_class["fingerprint"],))
                )
            elif kind == "environment":
                yield self._keep(
                    Row(kind, rec["fingerprint"], _coerce(Environment, rec, ENTITY_SKIP))
                )
            elif kind == "kernel":
                yield self._keep(Row(kind, kernel_key(rec), _coerce(Kernel, rec, ENTITY_SKIP)))
            elif kind == "run":
                yield self._keep(self._run(rec))
            else:
                yield self._measurement(rec)
        if self.due:
            key, left = next(iter(self.due.items()))
            raise ValueError(f"run {key} lacks {left} of its measurements: the file is cut short")

    def _keep(self, row: Row) -> Row:
        self.keys[row.kind].add(row.key)
        return row

    def _run(self, rec: dict[str, Any]) -> Row:
        key = str(rec.get("uuid") or "")
        if not key:
            raise ValueError("a run record has no uuid")
        values = _coerce(Run, rec, ENTITY_SKIP)
        refs = (rec["machine_fingerprint"], rec["environment_fingerprint"])
        if refs[0] not in self.keys["machine"] or refs[1] not in self.keys["environment"]:
            raise ValueError(f"run {key} refers to a machine or environment not before it")
        due = rec.get("measurements")  # the run's count (version 4 on)
        if due is not None and not (isinstance(due, int) and due >= 0):
            raise ValueError(f"run {key}: measurements {due!r} is not a count")
        if due:
            self.due[key] = due
        return Row("run", key, values, refs)

    def _measurement(self, m: dict[str, Any]) -> Row:
        self.measurements += 1
        number, run, kernel = self.measurements, m["run_key"], measurement_kernel(m)
        if run not in self.keys["run"] or kernel not in self.keys["kernel"]:
            raise ValueError(f"measurement {number} refers to a run or kernel not before it")
        left = self.due.pop(run, 0) - 1
        if left > 0:
            self.due[run] = left
        try:
            values = _coerce(Measurement, m, LINKS)
        except ValueError as exc:
            raise ValueError(f"measurement {number}: {exc}") from None
        problem = measurement_problem(values) if self.judge else None
        if problem is not None:
            raise ValueError(
                f"measurement {number} ({m['kernel']} {values['shape_key']}, run {run}): {problem}"
            )
        return Row("measurement", run, values, (kernel,))


@dataclass(frozen=True)
class Checked:
    """A bundle whose every record was typed and checked: ready to import."""

    bundle: Bundle
    measurements: int


def check_bundle(bundle: Bundle, on_progress: Progress | None = None) -> Checked:
    """Read ``bundle`` once, typing every record against the schema and every
    measurement by the rules ``collect`` keeps (benchdb/validity.py); UserError naming
    the first bad record, before any database is opened."""
    checker = _Checker()
    for row in _guarded(checker.rows(bundle.records()), bundle.origin):
        if on_progress and row.kind == "measurement" and checker.measurements % BATCH == 0:
            on_progress("checking", checker.measurements, bundle.total)
    return Checked(bundle, checker.measurements)


# ---------------------------------------------------------------- writing


@dataclass
class ImportCounts:
    """What an import added; ``measurements_present`` were already in the database."""

    node_classes: int = 0
    machines: int = 0
    environments: int = 0
    kernels: int = 0
    runs: int = 0
    measurements: int = 0
    measurements_present: int = 0


_NATURAL: dict[str, tuple[type[Base], tuple[str, ...], str]] = {
    "node_class": (NodeClass, ("fingerprint",), "node_classes"),
    "machine": (Machine, ("fingerprint",), "machines"),
    "environment": (Environment, ("fingerprint",), "environments"),
    "kernel": (Kernel, ("name", "version"), "kernels"),
}
_POINT = (Measurement.kernel_id, Measurement.shape_key, Measurement.threads,
          Measurement.precision, Measurement.context)  # fmt: skip


def _get_or_add(
    session: Session, model: type[Base], keys: tuple[str, ...], values: dict
) -> tuple[int, bool]:
    """(id, added?) of the row whose ``keys`` columns equal those of ``values``."""
    lookup = {k: values[k] for k in keys}
    before = session.scalar(select(model.id).filter_by(**lookup))
    if before is not None:
        return before, False
    rest = {k: v for k, v in values.items() if k not in keys}
    return get_or_create(session, model, lookup, **rest).id, True


class _Writer:
    """The second pass: adds the rows ``session``'s database lacks, measurements a
    batch at a time, each looked up by its natural key with an indexed query."""

    def __init__(self, session: Session, checked: Checked, on_progress: Progress | None) -> None:
        self.session, self.checked, self.on_progress = session, checked, on_progress
        self.counts = ImportCounts()
        self.ids: dict[str, dict[str, int]] = {kind: {} for kind in ("node_class", *KINDS[:4])}
        self.batch: list[Row] = []
        self.points: dict[int, set[tuple]] = {}  # the stored points of the batch's runs

    def add(self, row: Row) -> None:
        if row.kind == "measurement":
            self.batch.append(row)
            if len(self.batch) == BATCH:
                self.flush()
        elif row.key not in self.ids[row.kind]:
            add = self._run if row.kind == "run" else self._entity
            self.ids[row.kind][row.key] = add(row)

    def _entity(self, row: Row) -> int:
        model, natural, counter = _NATURAL[row.kind]
        values = row.fields
        if row.kind == "machine":
            values = {**values, "node_class_id": self.ids["node_class"][row.refs[0]]}
        row_id, added = _get_or_add(self.session, model, natural, values)
        setattr(self.counts, counter, getattr(self.counts, counter) + added)
        return row_id

    def _run(self, row: Row) -> int:
        found = self.session.scalar(select(Run.id).where(Run.uuid == row.key))
        if found is not None:
            return found
        run = new_run_row(
            self.session,
            machine_id=self.ids["machine"][row.refs[0]],
            environment_id=self.ids["environment"][row.refs[1]],
            **row.fields,  # with uuid=row.key
        )
        self.session.expunge(run)  # the identity map keeps no run
        self.counts.runs += 1
        return run.id

    def _stored_points(self, run_ids: set[int]) -> dict[int, set[tuple]]:
        """The points stored for ``run_ids``: kept from the batch before for a run it
        had too (a run's measurements come together), else one query by run id."""
        points = {r: self.points[r] for r in run_ids if r in self.points}
        missing = run_ids - points.keys()
        points.update((r, set()) for r in missing)
        if missing:
            stmt = select(Measurement.run_id, *_POINT).where(Measurement.run_id.in_(missing))
            for run_id, *point in self.session.execute(stmt):
                points[run_id].add(tuple(point))
        return points

    def flush(self) -> None:
        """Insert the batch's measurements not stored yet (several statements when some
        lack columns a file of an older version did not have)."""
        batch, self.batch = self.batch, []
        self.points = self._stored_points({self.ids["run"][r.key] for r in batch})
        statements: dict[tuple[str, ...], list[dict[str, Any]]] = {}
        for row in batch:
            run_id, kernel_id = self.ids["run"][row.key], self.ids["kernel"][row.refs[0]]
            f = row.fields
            point = (kernel_id, f["shape_key"], f["threads"], f["precision"], f["context"])
            if point in self.points[run_id]:
                self.counts.measurements_present += 1
                continue
            self.points[run_id].add(point)
            values = {**f, "run_id": run_id, "kernel_id": kernel_id}
            statements.setdefault(tuple(values), []).append(values)
        for rows in statements.values():
            self.session.execute(insert(Measurement.__table__), rows)
            self.counts.measurements += len(rows)
        if self.on_progress:
            done = self.counts.measurements + self.counts.measurements_present
            self.on_progress("importing", done, self.checked.measurements)


def import_bundle(
    db: Database, checked: Checked, on_progress: Progress | None = None
) -> ImportCounts:
    """Add what ``checked`` holds and ``db`` lacks, in one transaction: whatever ends
    the import before it commits (an error, a kill) leaves ``db`` as it was."""
    origin = checked.bundle.origin
    try:
        with db.session() as s:
            writer = _Writer(s, checked, on_progress)
            for row in _guarded(_Checker(judge=False).rows(checked.bundle.records()), origin):
                writer.add(row)
            writer.flush()
            return writer.counts
    except (StatementError, DBAPIError) as exc:
        reason = _why(exc.orig or exc)
        raise _malformed(origin, f"the database refused a row: {reason}") from exc
