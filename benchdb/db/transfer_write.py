"""Writing the record stream to an export file as it is read: JSON Lines line by line,
CSV and Parquet in batches of :data:`~benchdb.db.transfer_read.BATCH` rows (one
Parquet row group each), through pyarrow with one fixed schema.

The file is written under a temporary name beside ``path`` and put in place when
complete, so an export that fails or is killed leaves no half-written file
under the name asked for, and never replaces a file it was not told to.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ..outputs import head_has, writing_out
from .transfer_read import BATCH
from .transfer_records import FORMAT, VERSION, FlatRows, Record, flat_schema

Progress = Callable[[str, int, int | None], None]
"""Told ``(phase, measurements done, total or None)`` after each batch."""


@dataclass
class ExportCounts:
    """What an export file holds."""

    measurements: int = 0
    runs: int = 0
    machines: int = 0

    def count(self, kind: str) -> None:
        if kind in ("measurement", "run", "machine"):
            setattr(self, f"{kind}s", getattr(self, f"{kind}s") + 1)


def write_records(
    records: Iterable[Record],
    path: Path,
    fmt: str,
    *,
    replace: bool = False,
    total: int | None = None,
    on_progress: Progress | None = None,
) -> ExportCounts:
    """Write ``records`` to ``path`` as ``fmt`` (json, csv or parquet).

    ``path`` appears only once the file is complete; an existing file there is
    replaced only if it is an export (:func:`is_export`) or with ``replace`` (UserError
    otherwise).  ``total``, the number of
    measurements, is passed on to ``on_progress``.
    """
    counts = ExportCounts()

    def counted() -> Iterator[Record]:
        for kind, rec in records:
            counts.count(kind)
            if kind == "measurement" and on_progress and counts.measurements % BATCH == 0:
                on_progress("exporting", counts.measurements, total)
            yield kind, rec

    with writing_out(path, force=replace, ours=is_export) as partial:
        if fmt == "json":
            _write_lines(counted(), partial, counts)
        else:
            _write_flat(counted(), partial, fmt)
    if on_progress:
        on_progress("exporting", counts.measurements, total)
    return counts


def _write_lines(records: Iterable[Record], path: Path, counts: ExportCounts) -> None:
    """The header line, a line per record, and the end line, which counts the runs and
    measurements: a file without it was cut short."""
    with path.open("w", encoding="utf-8") as out:
        _line(out, {"format": FORMAT, "version": VERSION})
        for kind, rec in records:
            _line(out, {kind: rec})
        _line(out, {"end": {"runs": counts.runs, "measurements": counts.measurements}})


def _line(out: IO[str], item: dict[str, Any]) -> None:
    out.write(json.dumps(item, separators=(",", ":")))
    out.write("\n")


def _write_flat(records: Iterable[Record], path: Path, fmt: str) -> None:
    import pyarrow as pa
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    flat, schema = FlatRows(), flat_schema()
    writer = pq.ParquetWriter(path, schema) if fmt == "parquet" else pcsv.CSVWriter(path, schema)
    with writer:
        batch: list[dict[str, Any]] = []
        for kind, rec in records:
            row = flat.add(kind, rec)
            if row is not None:
                batch.append(row)
            if len(batch) == BATCH:
                writer.write_table(pa.Table.from_pylist(batch, schema=schema))
                batch = []
        # at least one batch: an empty selection still gets its header (CSV) or schema
        writer.write_table(pa.Table.from_pylist(batch, schema=schema))


def is_export(path: Path) -> bool:
    """Whether ``path`` is a file benchdb export wrote (so another export may replace it):
    JSON Lines begin with the format header, CSV with its ``export_format`` column, and
    Parquet holds that column in its schema."""
    if head_has(path, b'{"format":"%s"' % FORMAT.encode(), 64):
        return True
    if head_has(path, b'"export_format",', 32):
        return True
    if not head_has(path, b"PAR1", 4):
        return False
    import pyarrow.parquet as pq

    try:
        return "export_format" in pq.read_schema(path).names
    except Exception:  # any damage: not recognisably ours
        return False
