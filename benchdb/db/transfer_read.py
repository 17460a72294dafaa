"""Reading the record stream of :mod:`benchdb.db.transfer_records`: from a database, in
batches of measurement rows, and from an export file of any format version.

Each reader is a generator that holds one batch of rows and the keys of what it
has emitted, never a whole table or a whole file -- except a JSON document of
format version 1 to 3, which is one JSON value and read whole (such files were
written whole, by a benchdb that held them in memory).
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import ColumnElement, Connection, DateTime, Float, Select, func, select

from .engine import Database
from .models import Base, Environment, Kernel, Machine, Measurement, NodeClass, Run
from .scope import Scope
from .transfer_records import (
    ENTITY_SKIP,
    FLAT_COLUMNS,
    FORMAT,
    FORMAT_TAGS,
    KINDS,
    LINKS,
    LIST_COLUMNS,
    MEASUREMENT_FIELDS,
    READABLE,
    VERSION,
    Record,
    fields,
    kernel_key,
    machine_record,
)

BATCH = 2000  # measurement rows read (and written) at a time


# ---------------------------------------------------------------- a database


@dataclass(frozen=True)
class Selection:
    """Which measurements an export takes (all by default): of these kernels, of these
    runs, of the runs of a node class or host, of the runs started on or after ``since``."""

    kernels: Sequence[str] = ()
    run_ids: Sequence[int] = ()
    scope: Scope | None = None
    since: datetime | None = None

    def run_filter(self) -> list[ColumnElement[bool]]:
        """The conditions on :class:`Run` rows."""
        where = []
        if self.run_ids:
            where.append(Run.id.in_(list(self.run_ids)))
        if self.scope is not None:
            where.append(self.scope.runs())
        if self.since is not None:
            where.append(Run.started_at >= self.since)
        return where

    def measurements(self, stmt: Select) -> Select:
        """``stmt`` (a select from ``measurement``) narrowed to the selection.  The runs
        are a subquery, so that a recent few are found by their ``started_at`` index and
        their measurements by run, not by scanning every measurement."""
        if self.run_filter():
            stmt = stmt.where(Measurement.run_id.in_(select(Run.id).where(*self.run_filter())))
        return self.of_kernels(stmt)

    def of_kernels(self, stmt: Select) -> Select:
        """``stmt`` (a select from ``measurement``) narrowed to the selected kernels."""
        if self.kernels:
            named = select(Kernel.id).where(Kernel.name.in_(list(self.kernels)))
            stmt = stmt.where(Measurement.kernel_id.in_(named))
        return stmt


class _Fields:
    """A table's columns that a record holds, and how each value becomes a field,
    worked out once per table rather than per row: a timestamp as UTC ISO text (the
    same from either backend: SQLite returns the UTC time it stored without its
    offset), a float NaN as null, anything else as it is."""

    def __init__(self, model: type[Base], skip: set[str] = ENTITY_SKIP) -> None:
        self.columns = [model.__table__.c[name] for name in fields(model, skip)]
        self.names = [c.key for c in self.columns]
        self.converts = [_convert(c.type) for c in self.columns]

    def record(self, values: Sequence[Any]) -> dict[str, Any]:
        return {
            name: value if convert is None or value is None else convert(value)
            for name, convert, value in zip(self.names, self.converts, values, strict=True)
        }


def _utc_text(value: datetime) -> str:
    utc = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    return utc.isoformat()


def _finite_or_none(value: float) -> float | None:
    return None if math.isnan(value) else value


def _convert(coltype: Any) -> Callable[[Any], Any] | None:
    if isinstance(coltype, DateTime):
        return _utc_text
    return _finite_or_none if isinstance(coltype, Float) else None


_MACHINE, _NODE_CLASS = _Fields(Machine), _Fields(NodeClass)
_ENVIRONMENT, _KERNEL = _Fields(Environment), _Fields(Kernel)
_RUN, _MEASUREMENT = _Fields(Run), _Fields(Measurement, LINKS)


class _Entities:
    """Hosts, environments and kernels, each read by its id (one indexed query) the
    first time a run or measurement refers to it; only their keys are kept."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.keys: dict[str, dict[int, Any]] = {"machine": {}, "environment": {}, "kernel": {}}

    def _one(self, table: _Fields, model: type[Base], row_id: int, *more: Any) -> Any:
        return self.conn.execute(select(*table.columns, *more).where(model.id == row_id)).one()

    def machine(self, row_id: int) -> Iterator[Record]:
        if row_id not in self.keys["machine"]:
            *host, class_id = self._one(_MACHINE, Machine, row_id, Machine.node_class_id)
            node_class = _NODE_CLASS.record(self._one(_NODE_CLASS, NodeClass, class_id))
            rec = machine_record(_MACHINE.record(host), node_class)
            self.keys["machine"][row_id] = rec["fingerprint"]
            yield "machine", rec

    def environment(self, row_id: int) -> Iterator[Record]:
        if row_id not in self.keys["environment"]:
            rec = _ENVIRONMENT.record(self._one(_ENVIRONMENT, Environment, row_id))
            self.keys["environment"][row_id] = rec["fingerprint"]
            yield "environment", rec

    def kernel(self, row_id: int) -> Iterator[Record]:
        if row_id not in self.keys["kernel"]:
            rec = _KERNEL.record(self._one(_KERNEL, Kernel, row_id))
            self.keys["kernel"][row_id] = (rec["name"], rec["version"])
            yield "kernel", rec


def count_measurements(db: Database, selection: Selection) -> int:
    """How many measurements ``selection`` takes (one COUNT query): progress's total."""
    with db.reading() as s:
        return s.scalar(selection.measurements(select(func.count(Measurement.id)))) or 0


# One snapshot for every query of an export, as a collector may commit meanwhile: a run's
# count then matches the measurements that follow it.  (An SQLite read transaction is one.)
_SNAPSHOT = {"postgresql": {"isolation_level": "REPEATABLE READ"}}


def database_records(db: Database, selection: Selection) -> Iterator[Record]:
    """The records of ``selection``: runs in id order, each with its measurements.

    Two result streams are merged, runs and measurements both ordered by run, read
    :data:`BATCH` rows at a time (a server-side cursor on PostgreSQL); a run
    without a measurement in the selection is left out.  A run's record says how
    many measurements follow it, so that a reader can tell a file cut short.
    """
    with db.reading() as session:
        conn = session.connection(execution_options=_SNAPSHOT.get(db.backend, {}))
        entities = _Entities(conn)
        runs = iter(conn.execute(_runs(selection).execution_options(yield_per=BATCH)))
        points = conn.execute(
            selection.measurements(
                select(Measurement.run_id, Measurement.kernel_id, *_MEASUREMENT.columns)
            )
            .order_by(Measurement.run_id, Measurement.id)
            .execution_options(yield_per=BATCH)
        )
        run_id, key = None, ""
        for run_of, kernel_id, *values in points:
            if run_of != run_id:
                run = next(r for r in runs if r.id == run_of)
                run_id, key = run.id, run.uuid
                yield from entities.machine(run.machine_id)
                yield from entities.environment(run.environment_id)
                yield "run", _run_record(run, entities)
            yield from entities.kernel(kernel_id)
            name, version = entities.keys["kernel"][kernel_id]
            rec = _MEASUREMENT.record(values)
            yield "measurement", {**rec, "run_key": key, "kernel": name, "kernel_version": version}


def _runs(selection: Selection) -> Select:
    """The selected runs in id order, each with the number of its selected measurements
    (one indexed count each)."""
    count = selection.of_kernels(
        select(func.count(Measurement.id)).where(Measurement.run_id == Run.id)
    )
    return (
        select(
            Run.id,
            Run.machine_id,
            Run.environment_id,
            count.scalar_subquery().label("measurements"),
            *_RUN.columns,
        )
        .where(*selection.run_filter())
        .order_by(Run.id)
    )


def _run_record(run: Any, entities: _Entities) -> dict[str, Any]:
    return {
        **_RUN.record(run[4:]),
        "measurements": run.measurements,
        "machine_fingerprint": entities.keys["machine"][run.machine_id],
        "environment_fingerprint": entities.keys["environment"][run.environment_id],
    }


# ---------------------------------------------------------------- export files


def file_records(path: Path, fmt: str) -> Iterator[Record]:
    """The records of an export file of any readable version; ValueError (or an error of
    the file's parser) when it is not one."""
    if fmt == "json":
        return _json_records(path)
    rows = _csv_rows(path) if fmt == "csv" else _parquet_rows(path)
    return _flat_records(rows)


def _json_records(path: Path) -> Iterator[Record]:
    """JSON Lines (version 4), line by line; a JSON document (versions 1 to 3), whole."""
    with path.open(encoding="utf-8") as lines:
        first = lines.readline()
        try:
            header = json.loads(first)
        except ValueError:
            header = None  # an indented document: its first line is "{"
        if isinstance(header, dict) and header.get("format") == FORMAT and len(header) == 2:
            _check_version(header.get("version"), (VERSION,))
            yield from _line_records(lines)
        else:
            lines.seek(0)
            yield from _document_records(json.load(lines))


def _check_version(version: Any, readable: Sequence[int]) -> None:
    if version not in readable:
        raise ValueError(
            f"version {version!r}; this benchdb reads {', '.join(map(str, READABLE[:-1]))} as "
            f"a JSON document, {VERSION} as JSON Lines; a newer one needs a newer benchdb"
        )


def _line_records(lines: Iterable[str]) -> Iterator[Record]:
    """The records of the lines after the header, up to the end line, which counts the
    runs and measurements before it: without it, the file was cut short."""
    held = {"run": 0, "measurement": 0}
    end = None
    for number, line in enumerate(lines, 2):
        if not line.strip():
            continue
        if end is not None:
            raise ValueError(f"line {number} follows the end line")
        try:
            item = json.loads(line)
        except ValueError as exc:
            raise ValueError(f"line {number} is not JSON: {exc}") from None
        if isinstance(item, dict) and set(item) == {"end"}:
            end = item["end"]
            continue
        kind, rec = _line_record(item, number)
        held[kind] = held.get(kind, 0) + 1
        yield kind, rec
    if end is None:
        raise ValueError("no end line: the file is cut short")
    if end != {"runs": held["run"], "measurements": held["measurement"]}:
        raise ValueError(f"the end line counts {end}, the file holds {held}")


def _line_record(item: Any, number: int) -> Record:
    if not (isinstance(item, dict) and len(item) == 1):
        raise ValueError(f"line {number} is not one record")
    ((kind, rec),) = item.items()
    if kind not in KINDS or not isinstance(rec, dict):
        raise ValueError(f"line {number} is not one of the records {', '.join(KINDS)}")
    return kind, rec


def _document_records(doc: Any) -> Iterator[Record]:
    """The records of a JSON document of version 1, 2 or 3 (entities keyed by natural
    key; version 1 keys kernels by name and its measurements name no kernel version)."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError(f'no "format": "{FORMAT}" header')
    _check_version(doc.get("version"), READABLE[:-1])
    for kind, group in (("machine", "machines"), ("environment", "environments")):
        for rec in doc[group].values():
            yield kind, rec
    versions = {}
    for rec in doc["kernels"].values():
        kernel_key(rec)  # gives a version-1 record its version
        versions[rec["name"]] = rec["version"]
        yield "kernel", rec
    for key, rec in doc["runs"].items():
        yield "run", {**rec, "uuid": key}
    for m in doc["measurements"]:
        if doc["version"] == 1:
            m = {**m, "kernel_version": versions[m["kernel"]]}
        yield "measurement", m


# Columns added by later schema revisions, with a server default: a file written before
# them still imports (the default fills them).
OPTIONAL = {c.key for c in Measurement.__table__.columns if c.server_default is not None}
_REQUIRED = set(FLAT_COLUMNS) - OPTIONAL - {"kernel", "kernel_version"}


def _check_columns(names: Iterable[str]) -> None:
    missing = _REQUIRED - set(names)
    if missing:
        raise ValueError(f"missing column(s) {', '.join(sorted(missing))}")


def _csv_rows(path: Path) -> Iterator[dict[str, Any]]:
    """Rows of a CSV file, every value as text (an empty one as ""), a block at a time."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    with path.open(newline="", encoding="utf-8") as text:
        names = next(csv.reader(text), [])
    _check_columns(names)
    as_text = pcsv.ConvertOptions(
        column_types={name: pa.string() for name in names},
        strings_can_be_null=False,
        quoted_strings_can_be_null=False,
    )
    parse = pcsv.ParseOptions(newlines_in_values=True)
    one_block = pcsv.ReadOptions(use_threads=False)  # no blocks read ahead (memory)
    with pcsv.open_csv(path, one_block, parse, as_text) as batches:
        for batch in batches:
            yield from batch.to_pylist()


def _parquet_rows(path: Path) -> Iterator[dict[str, Any]]:
    """Rows of a Parquet file, :data:`BATCH` at a time."""
    import pyarrow.parquet as pq

    with pq.ParquetFile(path) as table:
        _check_columns(table.schema_arrow.names)
        for batch in table.iter_batches(batch_size=BATCH):
            yield from batch.to_pylist()


def _flat_records(rows: Iterable[dict[str, Any]]) -> Iterator[Record]:
    """The records of flat rows: each entity the first time a row names it, then the
    row's measurement.  Consecutive rows of one run repeat its texts, so a record's text
    is parsed only when it differs from the row before; seen entities are kept by key."""
    seen: dict[str, set[str]] = {kind: set() for kind in KINDS[:4]}
    last: dict[str, str] = {}
    kernel: tuple[str, str] = ("", "")
    for row in rows:
        if row["export_format"] not in FORMAT_TAGS:
            raise ValueError(f"export_format is not one of {', '.join(sorted(FORMAT_TAGS))}")
        for kind in ("machine", "environment", "kernel"):
            text = row[f"{kind}_record"]
            if text == last.get(kind):
                continue
            last[kind] = text
            rec = json.loads(text)
            key = kernel_key(rec) if kind == "kernel" else rec["fingerprint"]
            if kind == "kernel":
                kernel = (rec["name"], rec["version"])
            if key not in seen[kind]:
                seen[kind].add(key)
                yield kind, rec
        key = row["run_key"]
        if key not in seen["run"]:
            seen["run"].add(key)
            yield "run", {**json.loads(row["run_record"]), "uuid": key}
        m = {f: row[f] for f in MEASUREMENT_FIELDS if f in row}  # older: not every column
        for name in LIST_COLUMNS:
            if name in m:
                m[name] = json.loads(m[name])
        yield "measurement", {**m, "run_key": key, "kernel": kernel[0], "kernel_version": kernel[1]}
