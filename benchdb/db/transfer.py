"""Moving measurements between databases: export files and idempotent import.

A compute node collects into its own SQLite file; ``benchdb import`` brings
that file (or an export of it) into the shared PostgreSQL.  Importing is
idempotent -- the same data imported twice adds nothing -- because every row
is matched by a natural key, never by its database id:

* host (a ``machine`` row) and environment: their content fingerprint; a
  host's record holds its node class's record, matched by the class's
  fingerprint (a record written before node classes, format 1 or 2, is
  given its class and host fingerprint as migration 0006 gives old rows);
* kernel: its name and version (``name@version``; a record written before
  kernels had versions is a built-in kernel, versioned as migration 0004 does);
* run: its *run key*, ``run.config["uuid"]`` (``benchdb collect`` stores a
  fresh uuid4 in every run; a run without one gets the sha256 of its machine,
  host, pid and start time, which the import then stores as its uuid);
* measurement: its unique point (run, kernel, shape, threads, precision, context).

One in-memory form, :class:`Bundle`, has two serialisations: a JSON document
(entities listed once) and a flat table for CSV and Parquet (one row per
measurement, with the run's, kernel's, machine's and environment's records as
canonical JSON text in every row, so each file stands alone and loads into
pandas as is).  Values are checked against the ORM column types before
anything is written, and everything is written in one transaction: a
malformed file is refused with one line and the database is unchanged.
Communication measurements and fitted models are not part of an export.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd
from sqlalchemy import JSON, Boolean, DateTime, Float, Integer, Select, String, select
from sqlalchemy.exc import DBAPIError, StatementError
from sqlalchemy.orm import Session

from ..errors import UserError
from ..hashing import canonical_json, content_hash
from ..node_class import class_fields, host_fingerprint
from ..validity import measurement_problem
from .engine import SQLITE_SUFFIXES, Database, open_database
from .measurements import measurements_frame
from .models import Base, Environment, Kernel, Machine, Measurement, NodeClass, Run
from .repo import get_or_create, kernel_version
from .runs import new_run_row
from .scope import Scope

FORMAT = "benchdb-export"
VERSION = 3  # 3: a machine is a host holding its node class; 2: kernels have versions
READABLE = (1, 2, VERSION)
FORMAT_TAG = f"{FORMAT}/{VERSION}"
FORMAT_TAGS = {f"{FORMAT}/{v}" for v in READABLE}
FORMATS = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet", ".json": "json"}

_LINKS = {"id", "machine_id", "environment_id", "run_id", "kernel_id", "node_class_id"}
# Fields of each record: every column but surrogate ids and links (natural keys replace them).
_ENTITY_SKIP = _LINKS | {"created_at"}
RECORD_COLUMNS = ("machine_record", "environment_record", "run_record", "kernel_record")
LIST_COLUMNS = ("shape", "samples", "flags", "evidence", "set_aside", "pass_counts")


def fields(model: type[Base], skip: set[str]) -> list[str]:
    return [c.key for c in model.__table__.columns if c.key not in skip]


MEASUREMENT_FIELDS = fields(Measurement, _LINKS)
# Columns added by later schema revisions, with a server default: an export written
# before them still imports (the default fills them).
_OPTIONAL = {c.key for c in Measurement.__table__.columns if c.server_default is not None}


def _plain(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


def record(row: Base, skip: set[str] = _ENTITY_SKIP) -> dict[str, Any]:
    """A row as a JSON-able dict of its own columns (no surrogate ids)."""
    return {k: _plain(getattr(row, k)) for k in fields(type(row), skip)}


def machine_record(machine: Machine) -> dict[str, Any]:
    """A host's record with its node class's record under ``"node_class"``."""
    return {**record(machine), "node_class": record(machine.node_class)}


def run_key(run: Run) -> str:
    """The run's natural key across databases (see the module docstring)."""
    uuid = (run.config or {}).get("uuid")
    if uuid:
        return str(uuid)
    return content_hash(
        {
            "machine": run.machine.fingerprint,
            "hostname": run.hostname,
            "pid": run.pid,
            "started_at": run.started_at.replace(tzinfo=None).isoformat(),
        }
    )[:32]


@dataclass
class Bundle:
    """Measurements with everything they refer to, keyed by natural keys."""

    machines: dict[str, dict] = field(default_factory=dict)  # fingerprint -> record
    environments: dict[str, dict] = field(default_factory=dict)
    runs: dict[str, dict] = field(default_factory=dict)  # run key -> record (+ fingerprints)
    kernels: dict[str, dict] = field(default_factory=dict)  # name@version -> record
    measurements: list[dict] = field(default_factory=list)  # + run_key, kernel, kernel_version


# ---------------------------------------------------------------- reading the database


def bundle_from_db(
    db: Database,
    *,
    kernels: Sequence[str] | None = None,
    run_ids: Sequence[int] | None = None,
    scope: Scope | None = None,
) -> Bundle:
    """The measurements matching the filters (see :func:`measurements_frame`) and their entities."""
    frame = measurements_frame(db, kernels=kernels, run_ids=run_ids, scope=scope)
    bundle = Bundle()
    keys: dict[int, str] = {}
    with db.session() as s:
        for run in s.scalars(select(Run).where(Run.id.in_(frame["run_id"].unique().tolist()))):
            keys[run.id] = key = run_key(run)
            bundle.machines[run.machine.fingerprint] = machine_record(run.machine)
            bundle.environments[run.environment.fingerprint] = record(run.environment)
            bundle.runs[key] = {
                **record(run),
                "machine_fingerprint": run.machine.fingerprint,
                "environment_fingerprint": run.environment.fingerprint,
            }
        names = frame["kernel"].unique().tolist()
        for k in s.scalars(select(Kernel).where(Kernel.name.in_(names))):
            bundle.kernels[kernel_key(record(k))] = record(k)
    for m in frame_records(frame, [*MEASUREMENT_FIELDS, "run_id", "kernel", "kernel_version"]):
        run_id = m.pop("run_id")
        bundle.measurements.append({**m, "run_key": keys[run_id]})
    return bundle


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


def frame_records(frame: pd.DataFrame, columns: Sequence[str]) -> list[dict[str, Any]]:
    """Rows of a :func:`measurements_frame` as JSON-able dicts: NaN -> None, tuples ->
    lists, timestamps -> ISO text."""
    out = []
    for row in frame[list(columns)].to_dict("records"):
        for k, v in row.items():
            if isinstance(v, float) and math.isnan(v):
                row[k] = None
            elif isinstance(v, tuple):
                row[k] = list(v)
            else:
                row[k] = _plain(v)
        out.append(row)
    return out


# ---------------------------------------------------------------- files


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


def to_frame(bundle: Bundle) -> pd.DataFrame:
    """The flat table of CSV and Parquet exports: one row per measurement."""
    rows = []
    for m in bundle.measurements:
        run = bundle.runs[m["run_key"]]
        row = {"export_format": FORMAT_TAG, **m}
        for f in LIST_COLUMNS:
            row[f] = canonical_json(m[f])
        row["machine_record"] = canonical_json(bundle.machines[run["machine_fingerprint"]])
        row["environment_record"] = canonical_json(
            bundle.environments[run["environment_fingerprint"]]
        )
        row["run_record"] = canonical_json(run)
        row["kernel_record"] = canonical_json(bundle.kernels[_key_of(m)])
        rows.append(row)
    return pd.DataFrame(rows)


def write_bundle(bundle: Bundle, path: Path, fmt: str) -> None:
    if fmt == "json":
        doc = {"format": FORMAT, "version": VERSION, **bundle.__dict__}
        path.write_text(json.dumps(doc, indent=1, allow_nan=False))
    elif fmt == "csv":
        to_frame(bundle).to_csv(path, index=False)
    else:
        to_frame(bundle).to_parquet(path, index=False)


def _why(exc: BaseException) -> str:
    """The first line of an exception's message (its type when it has none)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _malformed(path: Path | str, why: str) -> UserError:
    return UserError(
        f"{path} is not a valid benchdb export ({why}); nothing was imported -- "
        "re-create it with `benchdb export`"
    )


def _from_frame(frame: pd.DataFrame) -> Bundle:
    required = {"export_format", "run_key", *MEASUREMENT_FIELDS, *RECORD_COLUMNS} - _OPTIONAL
    missing = required - set(frame.columns)
    if missing:
        raise ValueError(f"missing column(s) {', '.join(sorted(missing))}")
    if set(frame["export_format"]) - FORMAT_TAGS:
        raise ValueError(f"export_format is not one of {', '.join(sorted(FORMAT_TAGS))}")
    bundle = Bundle()
    for row in frame.to_dict("records"):
        run = json.loads(row["run_record"])
        machine = json.loads(row["machine_record"])
        environment = json.loads(row["environment_record"])
        kernel = json.loads(row["kernel_record"])
        key = row["run_key"]
        bundle.machines[machine["fingerprint"]] = machine
        bundle.environments[environment["fingerprint"]] = environment
        bundle.runs[key] = run
        bundle.kernels[kernel_key(kernel)] = kernel
        m = {f: row[f] for f in MEASUREMENT_FIELDS if f in row}  # older: not every column
        for f in LIST_COLUMNS:
            if f in m:
                m[f] = json.loads(m[f])
        bundle.measurements.append(
            {**m, "run_key": key, "kernel": kernel["name"], "kernel_version": kernel["version"]}
        )
    return bundle


def _keyed(bundle: Bundle, version: int) -> Bundle:
    """``bundle`` as version 2 has it: an export of version 1 keys its kernels by name,
    and its measurements name no kernel version."""
    if version == 1:
        by_name = dict(bundle.kernels)
        bundle.kernels = {kernel_key(rec): rec for rec in by_name.values()}
        for m in bundle.measurements:
            m["kernel_version"] = by_name[m["kernel"]]["version"]
    return bundle


def _key_of(m: dict[str, Any]) -> str:
    return f"{m['kernel']}@{m['kernel_version']}"


def read_bundle(path: Path) -> Bundle:
    """Read an export file; UserError (nothing written) when it is not one."""
    fmt = format_of(path)
    try:
        if fmt == "json":
            doc = json.loads(path.read_text())
            if not isinstance(doc, dict) or doc.get("format") != FORMAT:
                raise ValueError(f'no "format": "{FORMAT}" header')
            if doc.get("version") not in READABLE:
                raise ValueError(
                    f"version {doc.get('version')!r}; this benchdb reads "
                    f"{' and '.join(map(str, READABLE))}"
                )
            bundle = Bundle(**{k: doc[k] for k in Bundle.__dataclass_fields__})
            return _keyed(bundle, doc["version"])
        frame = (
            pd.read_csv(path, dtype=str, keep_default_na=False)
            if fmt == "csv"
            else pd.read_parquet(path)
        )
        return _from_frame(frame)
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise _malformed(path, _why(exc)) from exc
    except Exception as exc:  # pyarrow's errors do not share a base class with ValueError
        if type(exc).__module__.startswith("pyarrow"):
            raise _malformed(path, _why(exc)) from exc
        raise


# ---------------------------------------------------------------- writing the database


def _coerce(model: type[Base], rec: dict, skip: set[str]) -> dict[str, Any]:
    """``rec``'s fields typed as ``model``'s columns (from JSON, CSV text or Parquet)."""
    out: dict[str, Any] = {}
    for col in model.__table__.columns:
        if col.key in skip:
            continue
        if col.key not in rec and col.server_default is not None:
            continue  # written before the column existed: the database default fills it
        if col.key not in rec:
            raise ValueError(f"{model.__tablename__} record lacks {col.key!r}")
        value = rec[col.key]
        empty = value is None or (isinstance(value, float) and math.isnan(value))
        if empty or (value == "" and not isinstance(col.type, String)):
            if not col.nullable:
                raise ValueError(f"{model.__tablename__}.{col.key} is empty")
            out[col.key] = None
            continue
        out[col.key] = _typed(col.type, value, f"{model.__tablename__}.{col.key}")
    return out


def _typed(coltype: Any, value: Any, name: str) -> Any:
    if isinstance(coltype, JSON):
        return json.loads(value) if isinstance(value, str) else value
    if isinstance(coltype, Boolean):
        if isinstance(value, str):
            if value.lower() not in ("true", "false", "1", "0"):
                raise ValueError(f"{name} is not a boolean: {value!r}")
            return value.lower() in ("true", "1")
        return bool(value)
    if isinstance(coltype, Integer | Float):
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"{name} is not a number: {value!r}") from None
        if isinstance(coltype, Float):
            return number
        if not number.is_integer():
            raise ValueError(f"{name} is not an integer: {value!r}")
        return int(number)
    if isinstance(coltype, DateTime):
        return datetime.fromisoformat(value) if isinstance(value, str) else value
    if not isinstance(value, str):
        raise ValueError(f"{name} is not text: {value!r}")
    return value


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


@dataclass
class Checked:
    """A bundle checked and typed against the schema, ready to write."""

    node_classes: dict[str, dict]  # fingerprint -> fields
    machines: dict[str, tuple[str, dict]]  # the runs' key -> (node class fingerprint, fields)
    environments: dict[str, dict]
    kernels: dict[str, dict]
    runs: dict[str, tuple[str, str, dict]]  # key -> (machine fp, environment fp, fields)
    measurements: list[tuple[str, str, dict]]  # (run key, kernel, fields)


def _host_and_class(rec: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A machine record typed as a host and its node class.

    A record written before node classes (formats 1 and 2) describes a machine
    by the fingerprint of that time; its class and host fingerprint are
    derived as migration 0006 derives them for the rows of an old database.
    """
    nested = rec.get("node_class")
    host = _coerce(Machine, {k: v for k, v in rec.items() if k != "node_class"}, _ENTITY_SKIP)
    if nested is None:
        fields = class_fields(host)
        nested = {**fields, "fingerprint": content_hash(fields)}
        host["fingerprint"] = host_fingerprint(nested["fingerprint"], host["hostname"])
    return host, _coerce(NodeClass, nested, _ENTITY_SKIP)


def _check(bundle: Bundle) -> Checked:
    runs = {}
    for key, rec in bundle.runs.items():
        fields_ = _coerce(Run, rec, _ENTITY_SKIP)
        fields_["config"] = {**(fields_["config"] or {}), "uuid": key}
        fp_m, fp_e = rec["machine_fingerprint"], rec["environment_fingerprint"]
        if fp_m not in bundle.machines or fp_e not in bundle.environments:
            raise ValueError(f"run {key} refers to a machine or environment not in the file")
        runs[key] = (fp_m, fp_e, fields_)
    measurements = []
    for number, m in enumerate(bundle.measurements, 1):
        if m["run_key"] not in runs or _key_of(m) not in bundle.kernels:
            raise ValueError("a measurement refers to a run or kernel not in the file")
        values = _coerce(Measurement, m, _LINKS)
        problem = measurement_problem(values)
        if problem is not None:
            raise ValueError(
                f"measurement {number} ({m['kernel']} {values['shape_key']}, run "
                f"{m['run_key']}): {problem}"
            )
        measurements.append((m["run_key"], _key_of(m), values))
    classes: dict[str, dict] = {}
    machines: dict[str, tuple[str, dict]] = {}
    for key, rec in bundle.machines.items():
        host, node_class = _host_and_class(rec)
        classes[node_class["fingerprint"]] = node_class
        machines[key] = (node_class["fingerprint"], host)
    return Checked(
        node_classes=classes,
        machines=machines,
        environments={
            fp: _coerce(Environment, r, _ENTITY_SKIP) for fp, r in bundle.environments.items()
        },
        kernels={n: _coerce(Kernel, r, _ENTITY_SKIP) for n, r in bundle.kernels.items()},
        runs=runs,
        measurements=measurements,
    )


def _run_by_key(key: str) -> Select:
    return select(Run).where(Run.config["uuid"].as_string() == key)


def _get_or_add(
    session: Session, model: type[Base], keys: tuple[str, ...], values: dict
) -> tuple[int, bool]:
    """(id, added?) of the row whose ``keys`` columns equal those of ``values``."""
    lookup = {k: values[k] for k in keys}
    before = session.scalars(select(model).filter_by(**lookup)).first()
    if before is not None:
        return before.id, False
    rest = {k: v for k, v in values.items() if k not in keys}
    return get_or_create(session, model, lookup, **rest).id, True


def _write(session: Session, data: Checked) -> ImportCounts:
    counts = ImportCounts()
    ids: dict[str, dict[str, int]] = {"machine": {}, "environment": {}, "kernel": {}, "run": {}}
    classes: dict[str, int] = {}
    for fp, values in data.node_classes.items():
        classes[fp], added = _get_or_add(session, NodeClass, ("fingerprint",), values)
        counts.node_classes += added
    hosts = {
        key: {**values, "node_class_id": classes[fp]} for key, (fp, values) in data.machines.items()
    }
    for kind, model, key, rows in (
        ("machine", Machine, ("fingerprint",), hosts),
        ("environment", Environment, ("fingerprint",), data.environments),
        ("kernel", Kernel, ("name", "version"), data.kernels),
    ):
        for natural, values in rows.items():
            ids[kind][natural], added = _get_or_add(session, model, key, values)
            setattr(counts, f"{kind}s", getattr(counts, f"{kind}s") + added)
    for key, (fp_m, fp_e, values) in data.runs.items():
        run = session.scalars(_run_by_key(key)).first()
        if run is None:
            run = new_run_row(
                session,
                machine_id=ids["machine"][fp_m],
                environment_id=ids["environment"][fp_e],
                **values,
            )
            counts.runs += 1
        ids["run"][key] = run.id
    present = {
        (r, k, sk, t, p, c)
        for r, k, sk, t, p, c in session.execute(
            select(
                Measurement.run_id,
                Measurement.kernel_id,
                Measurement.shape_key,
                Measurement.threads,
                Measurement.precision,
                Measurement.context,
            ).where(Measurement.run_id.in_(list(ids["run"].values())))
        )
    }
    for key, kernel, values in data.measurements:
        run_id, kernel_id = ids["run"][key], ids["kernel"][kernel]
        point = (run_id, kernel_id, values["shape_key"], values["threads"],
                 values["precision"], values["context"])  # fmt: skip
        if point in present:
            counts.measurements_present += 1
            continue
        present.add(point)
        session.add(Measurement(run_id=run_id, kernel_id=kernel_id, **values))
        counts.measurements += 1
    return counts


def check_bundle(bundle: Bundle, origin: str = "import data") -> Checked:
    """``bundle`` typed against the schema, every measurement by the rules ``collect``
    keeps (benchdb/validity.py); UserError naming the first bad row, before any database
    is opened."""
    try:
        return _check(bundle)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise _malformed(origin, _why(exc)) from exc


def import_bundle(db: Database, data: Checked, origin: str = "import data") -> ImportCounts:
    """Add what ``data`` holds and ``db`` lacks, in one transaction."""
    try:
        with db.session() as s:
            return _write(s, data)
    except (StatementError, DBAPIError) as exc:
        reason = _why(exc.orig or exc)
        raise _malformed(origin, f"the database refused a row: {reason}") from exc


def load_source(source: str) -> tuple[Bundle, str]:
    """(bundle, where it came from) of an export file, an SQLite file or a database URL.

    Reads only: a source database is opened without upgrading it.
    """
    path = Path(source).expanduser()
    if "://" not in source and path.suffix.lower() in SQLITE_SUFFIXES:
        if not path.is_file():
            raise UserError(f"no such file {source}; give an export file or a database URL")
        source = f"sqlite:///{path.resolve()}"
    if "://" in source:
        other = open_database(source, upgrade=False, create=False)
        try:
            return bundle_from_db(other), other.display_url
        finally:
            other.close()
    if not path.is_file():
        raise UserError(f"no such file {source}; give an export file or a database URL")
    return read_bundle(path), str(path)
