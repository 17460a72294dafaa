"""What an export holds: records of rows, their natural keys, and the file layouts.

An export is a stream of *records*, each a ``(kind, fields)`` pair: a host
(``machine``, holding its node class's record under ``"node_class"``), an
``environment``, a ``kernel``, a ``run`` and a ``measurement``.  A record
holds a row's own columns, never a database id: rows refer to each other by
natural keys, so that a record means the same in every database --

* host and environment: their ``fingerprint``;
* kernel: ``name@version``;
* run: its ``uuid`` (the run key); a run names its host and environment by
  ``machine_fingerprint`` and ``environment_fingerprint``;
* measurement: its run's key (``run_key``), ``kernel`` and ``kernel_version``.

Every record comes before the first record that refers to it, and a run's
measurements come right after its run: a reader needs to keep only keys, never
rows, which is what lets a file of any size be read and written in bounded
memory.  A run's record also says how many of its measurements follow it
(``measurements``): a file cut short never imports part of a run.  Two layouts
carry the stream (format version :data:`VERSION`):

* JSON Lines: a header line ``{"format": "benchdb-export", "version": 4}``,
  one line per record, ``{"<kind>": {fields}}``, and an end line,
  ``{"end": {"runs": R, "measurements": M}}``, without which the file was cut
  short;
* a flat table (CSV, Parquet): one row per measurement, with its host's,
  environment's, run's and kernel's records as canonical JSON text in every
  row, so that each file stands alone and loads into pandas as is.
"""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from sqlalchemy import Boolean, Float, Integer

from ..hashing import canonical_json
from .models import Base, Measurement
from .repo import kernel_version

if TYPE_CHECKING:
    import pyarrow as pa

FORMAT = "benchdb-export"
# 4: JSON Lines, runs keyed by their uuid column; 3: a machine is a host holding its node
# class; 2: kernels have versions
VERSION = 4
READABLE = (1, 2, 3, VERSION)
FORMAT_TAG = f"{FORMAT}/{VERSION}"
FORMAT_TAGS = {f"{FORMAT}/{v}" for v in READABLE}
FORMATS = {
    ".csv": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".json": "json",
    ".jsonl": "json",
}

Record = tuple[str, dict[str, Any]]
KINDS = ("machine", "environment", "kernel", "run", "measurement")

LINKS = {"id", "machine_id", "environment_id", "run_id", "kernel_id", "node_class_id"}
# Fields of each entity record: every column but surrogate ids and links (natural keys
# replace them) and the time a row was added to one database.
ENTITY_SKIP = LINKS | {"created_at"}
RECORD_COLUMNS = ("machine_record", "environment_record", "run_record", "kernel_record")
LIST_COLUMNS = ("shape", "samples", "flags", "evidence", "set_aside", "pass_counts")
MEASUREMENT_REFS = ("run_key", "kernel", "kernel_version")


def fields(model: type[Base], skip: set[str]) -> list[str]:
    """The columns of ``model`` a record holds."""
    return [c.key for c in model.__table__.columns if c.key not in skip]


MEASUREMENT_FIELDS = fields(Measurement, LINKS)
FLAT_COLUMNS = ("export_format", *MEASUREMENT_FIELDS, *MEASUREMENT_REFS, *RECORD_COLUMNS)


def machine_record(host: dict[str, Any], node_class: dict[str, Any]) -> dict[str, Any]:
    """A host's record with its node class's record under ``"node_class"``."""
    return {**host, "node_class": node_class}


def kernel_key(rec: dict[str, Any]) -> str:
    """``name@version`` of a kernel record; a record without a version (written before
    kernels had versions) is a built-in kernel and gets the version migration 0004 gives."""
    if not rec.get("version"):
        info = rec.get("info") or {}
        rec["version"] = kernel_version(
            SimpleNamespace(
                **{k: rec[k] for k in _VERSIONED},
                write_allocate=info.get("write_allocate", True),
                source_hash=None,
                layout=None,
            )
        )
        rec.setdefault("origin", "builtin")
    return f"{rec['name']}@{rec['version']}"


_VERSIONED = (
    "name", "family", "ndim", "flops_per_point", "loads_per_point", "stores_per_point",
    "arrays", "footprint_version",
)  # fmt: skip


def measurement_kernel(m: dict[str, Any]) -> str:
    """The ``name@version`` key of the kernel a measurement record names."""
    return f"{m['kernel']}@{m['kernel_version']}"


def flat_schema() -> pa.Schema:
    """The columns of the flat table and their types: a measurement's numbers and
    booleans as such, everything else (text, JSON lists and objects, ISO timestamps,
    records) as text.  (pyarrow is imported here: JSON files do without it.)"""
    import pyarrow as pa

    def arrow_type(name: str) -> pa.DataType:
        column = Measurement.__table__.c.get(name)
        if column is None:
            return pa.string()
        if isinstance(column.type, Boolean):
            return pa.bool_()
        if isinstance(column.type, Float):
            return pa.float64()
        if isinstance(column.type, Integer):
            return pa.int64()
        return pa.string()

    return pa.schema([(name, arrow_type(name)) for name in FLAT_COLUMNS])


class FlatRows:
    """Turns the record stream into rows of the flat table.

    It keeps the canonical JSON text of every host, environment and kernel seen
    (few: they are shared by many runs) and of the current run only, as a run's
    measurements follow it.
    """

    def __init__(self) -> None:
        self.texts: dict[str, dict[str, str]] = {kind: {} for kind in KINDS[:3]}
        self.run: dict[str, Any] = {}
        self.run_text = ""

    def add(self, kind: str, rec: dict[str, Any]) -> dict[str, Any] | None:
        """The flat row of a measurement record; None for an entity record (kept)."""
        if kind == "run":
            self.run, self.run_text = rec, canonical_json(rec)
            return None
        if kind != "measurement":
            key = kernel_key(rec) if kind == "kernel" else rec["fingerprint"]
            self.texts[kind][key] = canonical_json(rec)
            return None
        row = {"export_format": FORMAT_TAG, **rec}
        for name in LIST_COLUMNS:
            row[name] = json.dumps(rec[name], separators=(",", ":"))
        row["machine_record"] = self.texts["machine"][self.run["machine_fingerprint"]]
        row["environment_record"] = self.texts["environment"][self.run["environment_fingerprint"]]
        row["run_record"] = self.run_text
        row["kernel_record"] = self.texts["kernel"][measurement_kernel(rec)]
        return row
