"""Reading measurements back as pandas DataFrames: the one read path that the
predictor, regression tracking, reports and the CLI share.

Columns are stable and in SI units: see :data:`MEASUREMENT_COLUMNS`.  pandas
is imported only when a frame is built, so the quick paths that use this
module's shape and machine helpers (``benchdb predict``) start fast.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from ..validity import valid_problem
from .engine import Database
from .models import Environment, Kernel, Machine, Measurement, Run

if TYPE_CHECKING:
    import pandas as pd

    from .scope import Scope

MEASUREMENT_COLUMNS = [
    "measurement_id",
    "run_id",
    "machine_id",
    "host",
    "node_class_id",
    "environment_id",
    "run_status",
    "run_tags",
    "run_started_at",
    "kernel",
    "kernel_version",
    "family",
    "shape",
    "shape_key",
    "points",
    "footprint_bytes",
    "threads",
    "placement",
    "precision",
    "context",
    "repetitions",
    "passes",
    "samples",
    "evidence",
    "set_aside",
    "pass_counts",
    "t_min",
    "t_median",
    "t_iqr",
    "t_cv",
    "flop_rate",
    "byte_rate",
    "checksum",
    "valid",
    "flags",
    "flops_per_point",
    "created_at",
]


def measurements_frame(
    db: Database,
    *,
    kernels: Sequence[str] | None = None,
    run_ids: Sequence[int] | None = None,
    scope: Scope | None = None,
    environment_id: int | None = None,
    threads: Sequence[int] | None = None,
    precision: str | None = None,
    context: str | None = None,
    valid_only: bool = False,
) -> pd.DataFrame:
    """Measurements joined with their run, host and kernel, filtered; one row per point.

    ``machine_id`` is the host's id, ``host`` its name (:mod:`benchdb.db.scope`).
    """
    import pandas as pd

    stmt = (
        select(Measurement, Run, Kernel, Machine)
        .join(Run, Measurement.run_id == Run.id)
        .join(Kernel, Measurement.kernel_id == Kernel.id)
        .join(Machine, Run.machine_id == Machine.id)
        .order_by(Measurement.id)
    )
    if kernels:
        stmt = stmt.where(Kernel.name.in_(list(kernels)))
    if run_ids:
        stmt = stmt.where(Measurement.run_id.in_(list(run_ids)))
    if scope is not None:
        stmt = stmt.where(scope.runs())
    if environment_id is not None:
        stmt = stmt.where(Run.environment_id == environment_id)
    if threads:
        stmt = stmt.where(Measurement.threads.in_(list(threads)))
    if precision is not None:
        stmt = stmt.where(Measurement.precision == precision)
    if context is not None:
        stmt = stmt.where(Measurement.context == context)
    if valid_only:
        stmt = stmt.where(Measurement.valid.is_(True))
    rows: list[dict[str, Any]] = []
    with db.reading() as s:
        for m, r, k, h in s.execute(stmt):
            if valid_only and valid_problem(m.__dict__) is not None:
                continue  # marked valid by an older import, yet unusable
            rows.append(
                {
                    "measurement_id": m.id,
                    "run_id": r.id,
                    "machine_id": r.machine_id,
                    "host": h.hostname,
                    "node_class_id": h.node_class_id,
                    "environment_id": r.environment_id,
                    "run_status": r.status,
                    "run_tags": list(r.tags or []),
                    "run_started_at": r.started_at,
                    "kernel": k.name,
                    "kernel_version": k.version,
                    "family": k.family,
                    "shape": tuple(m.shape),
                    "shape_key": m.shape_key,
                    "points": m.points,
                    "footprint_bytes": m.footprint_bytes,
                    "threads": m.threads,
                    "placement": m.placement,
                    "precision": m.precision,
                    "context": m.context,
                    "repetitions": m.repetitions,
                    "passes": m.passes,
                    "samples": list(m.samples),
                    "evidence": dict(m.evidence or {}),
                    "set_aside": dict(m.set_aside or {}),
                    "pass_counts": list(m.pass_counts or []),
                    "t_min": m.t_min,
                    "t_median": m.t_median,
                    "t_iqr": m.t_iqr,
                    "t_cv": m.t_cv,
                    "flop_rate": m.flop_rate,
                    "byte_rate": m.byte_rate,
                    "checksum": m.checksum,
                    "valid": m.valid,
                    "flags": list(m.flags or []),
                    "flops_per_point": k.flops_per_point,
                    "created_at": m.created_at,
                }
            )
    return pd.DataFrame(rows, columns=MEASUREMENT_COLUMNS)


def machine_rows(
    db: Database,
    scope: Scope,
    *,
    kernels: Sequence[str] | None = None,
    precision: str | None = None,
) -> list[dict[str, Any]]:
    """Every measurement of ``scope`` (optionally some kernels / one precision), as dicts:
    the narrow projection of :func:`measurements_frame` that ``benchdb predict`` reads
    without pandas (:mod:`benchdb.predict.source`)."""
    stmt = (
        select(
            Measurement.id,
            Measurement.run_id,
            Run.environment_id,
            Run.started_at,
            Run.tags,
            Kernel.name,
            Kernel.version,
            Measurement.shape,
            Measurement.shape_key,
            Measurement.points,
            Measurement.footprint_bytes,
            Measurement.threads,
            Measurement.precision,
            Measurement.context,
            Measurement.samples,
            Measurement.passes,
            Measurement.pass_counts,
            Measurement.t_median,
            Measurement.valid,
            Measurement.flags,
        )
        .join(Run, Measurement.run_id == Run.id)
        .join(Kernel, Measurement.kernel_id == Kernel.id)
        .where(scope.runs())
        .order_by(Measurement.id)
    )
    if kernels:
        stmt = stmt.where(Kernel.name.in_(list(kernels)))
    if precision is not None:
        stmt = stmt.where(Measurement.precision == precision)
    keys = [
        "measurement_id", "run_id", "environment_id", "run_started_at", "run_tags", "kernel",
        "kernel_version", "shape", "shape_key", "points", "footprint_bytes", "threads",
        "precision", "context", "samples", "passes", "pass_counts", "t_median", "valid",
        "flags",
    ]  # fmt: skip
    with db.reading() as s:
        rows = [dict(zip(keys, row, strict=True)) for row in s.execute(stmt)]
    for r in rows:  # one an older import let in is counted invalid, never used
        r["valid"] = r["valid"] and valid_problem(r) is None
    return rows


def kernel_names(db: Database) -> set[str]:
    """The names of every kernel the database holds, of any version."""
    with db.session() as s:
        return set(s.scalars(select(Kernel.name)))


def measured_kernels(db: Database, scope: Scope) -> list[str]:
    """The names of the kernels measured in ``scope``'s runs, sorted."""
    with db.reading() as s:
        stmt = (
            select(Kernel.name)
            .join(Measurement, Measurement.kernel_id == Kernel.id)
            .join(Run, Measurement.run_id == Run.id)
            .where(scope.runs())
            .distinct()
            .order_by(Kernel.name)
        )
        return list(s.scalars(stmt))


def registered_ids(
    db: Database, machine_fingerprint: str, environment_fingerprint: str
) -> tuple[int | None, int | None]:
    """The ids of a host and a software environment by fingerprint; None for one that
    has run nothing here yet."""
    with db.reading() as s:
        return (
            s.scalar(select(Machine.id).where(Machine.fingerprint == machine_fingerprint)),
            s.scalar(
                select(Environment.id).where(Environment.fingerprint == environment_fingerprint)
            ),
        )
