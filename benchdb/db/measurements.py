"""Reading measurements back as pandas DataFrames: the one read path that the
predictor, regression tracking, reports and the CLI share.

Columns are stable and in SI units: see :data:`MEASUREMENT_COLUMNS`.  pandas
is imported only when a frame is built, so the quick paths that use this
module's shape and machine helpers (``benchdb predict``) start fast.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import islice
from typing import TYPE_CHECKING, Any

from sqlalchemy import ColumnElement, and_, func, select
from sqlalchemy.orm import Session

from ..validity import valid_problem
from .engine import Database
from .models import Environment, Kernel, Machine, Measurement, Run
from .newest import runs_newest_first

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


RAW_COLUMNS = ("evidence", "set_aside")
"""The per-sample columns beside ``samples``: the bulk of a stored point, read only by
those who show or judge single samples (``with_evidence``)."""

_SOURCES = {
    "measurement_id": Measurement.id,
    "run_id": Run.id,
    "machine_id": Run.machine_id,
    "host": Machine.hostname,
    "node_class_id": Machine.node_class_id,
    "environment_id": Run.environment_id,
    "run_status": Run.status,
    "run_tags": Run.tags,
    "run_started_at": Run.started_at,
    "kernel": Kernel.name,
    "kernel_version": Kernel.version,
    "family": Kernel.family,
    "flops_per_point": Kernel.flops_per_point,
    **{
        name: getattr(Measurement, name)
        for name in MEASUREMENT_COLUMNS
        if name not in ("measurement_id", "run_id", "machine_id", "host", "node_class_id",
                        "environment_id", "run_status", "run_tags", "run_started_at",
                        "kernel", "kernel_version", "family", "flops_per_point")
    },
}  # fmt: skip
_EMPTY = {"run_tags": list, "samples": list, "evidence": dict, "set_aside": dict,
          "pass_counts": list, "flags": list}  # fmt: skip


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
    with_evidence: bool = True,
) -> pd.DataFrame:
    """Measurements joined with their run, host and kernel, filtered; one row per point.

    ``machine_id`` is the host's id, ``host`` its name (:mod:`benchdb.db.scope`).
    ``with_evidence=False`` leaves out :data:`RAW_COLUMNS` (a history of a year reads
    medians, not what the operating system saw in every sample): the columns are then
    absent from the frame.
    """
    import pandas as pd

    names = [c for c in MEASUREMENT_COLUMNS if with_evidence or c not in RAW_COLUMNS]
    stmt = (
        select(*(_SOURCES[c] for c in names))
        .select_from(Measurement)
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
    empty = [(c, _EMPTY[c]) for c in names if c in _EMPTY]
    rows: list[dict[str, Any]] = []
    with db.reading() as s:
        for values in s.execute(stmt):
            row = dict(zip(names, values, strict=True))
            for c, kind in empty:
                row[c] = kind(row[c] or ())
            if valid_only and valid_problem(row) is not None:
                continue  # marked valid by an older import, yet unusable
            row["shape"] = tuple(row["shape"])
            rows.append(row)
    return pd.DataFrame(rows, columns=names)


def machine_rows(
    db: Database,
    scope: Scope,
    *,
    kernels: Sequence[str] | None = None,
    precision: str | None = None,
    threads: int | None = None,
    environment_id: int | None = None,
    run_ids: Sequence[int] | None = None,
) -> list[dict[str, Any]]:
    """Every measurement of ``scope`` (optionally some kernels / one precision / thread
    count / environment / some runs), as dicts: the narrow projection of
    :func:`measurements_frame` that ``benchdb predict`` reads without pandas
    (:mod:`benchdb.predict.source`).  A year of history holds thousands of runs of a
    kernel; a prediction rests on one environment's, so callers name it
    (:func:`newest_point`, :func:`widest_environment`) rather than read them all."""
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
            Measurement.t_iqr,
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
    if threads is not None:
        stmt = stmt.where(Measurement.threads == threads)
    if environment_id is not None:
        stmt = stmt.where(Run.environment_id == environment_id)
    if run_ids is not None:
        stmt = stmt.where(Measurement.run_id.in_(list(run_ids)))
    keys = [
        "measurement_id", "run_id", "environment_id", "run_started_at", "run_tags", "kernel",
        "kernel_version", "shape", "shape_key", "points", "footprint_bytes", "threads",
        "precision", "context", "samples", "passes", "pass_counts", "t_median", "t_iqr",
        "valid", "flags",
    ]  # fmt: skip
    with db.reading() as s:
        rows = [dict(zip(keys, row, strict=True)) for row in s.execute(stmt)]
    for r in rows:  # one an older import let in is counted invalid, never used
        r["valid"] = r["valid"] and valid_problem(r) is None
    return rows


RUN_PAGE = 200
"""Runs read at a time, newest first, when looking for the newest that measured a kernel."""


def _kernel_runs_newest_first(
    session: Session, scope: Scope, kernel: str, points: ColumnElement[bool] | None = None
) -> Iterator[tuple[int, int, str]]:
    """(run id, environment id, kernel version) of ``scope``'s runs that measured
    ``kernel`` (points matching ``points``), newest first.

    Runs are read a page at a time and their points looked up by the run index, so the
    newest of a year of history costs one page, not a sort of every point of the kernel."""
    kernel_ids = {
        kernel_id: version
        for kernel_id, version in session.execute(
            select(Kernel.id, Kernel.version).where(Kernel.name == kernel)
        )
    }
    if not kernel_ids:
        return
    any_point = select(Measurement.id).where(Measurement.kernel_id.in_(list(kernel_ids)))
    if points is not None and session.execute(any_point.where(points).limit(1)).first() is None:
        return  # none anywhere: paging through every run would only confirm it
    runs = runs_newest_first(session, scope, columns=(Run.environment_id,))
    while page := list(islice(runs, RUN_PAGE)):
        found = select(Measurement.run_id, Measurement.kernel_id).where(
            Measurement.run_id.in_([run.id for run in page]),
            Measurement.kernel_id.in_(list(kernel_ids)),
        )
        if points is not None:
            found = found.where(points)
        measured = {run_id: kernel_id for run_id, kernel_id in session.execute(found.distinct())}
        for run in page:
            if run.id in measured:
                yield run.id, run.environment_id, kernel_ids[measured[run.id]]


def newest_point(
    db: Database,
    scope: Scope,
    kernel: str,
    *,
    precision: str,
    context: str | None = None,
    version: str | None = None,
) -> tuple[str, int] | None:
    """(kernel version, environment id) of the newest run of ``scope`` that measured
    ``kernel`` at ``precision`` (in ``context``, its ``version``); None if none did."""
    points = Measurement.precision == precision
    if context is not None:
        points = and_(points, Measurement.context == context)
    with db.reading() as s:
        for _, environment_id, found in _kernel_runs_newest_first(s, scope, kernel, points):
            if version is None or found == version:
                return found, environment_id
    return None


def newest_runs(db: Database, scope: Scope, kernel: str, count: int) -> list[int]:
    """The ids of the ``count`` newest runs of ``scope`` that measured ``kernel``."""
    with db.reading() as s:
        return [
            run_id for run_id, _, _ in islice(_kernel_runs_newest_first(s, scope, kernel), count)
        ]


def measured_runs(
    db: Database, scope: Scope, *, precision: str, threads: int
) -> list[dict[str, Any]]:
    """The runs of ``scope`` holding a point at ``precision`` and ``threads``: their
    ``run_id``, ``run_tags``, ``run_started_at`` and ``environment_id``."""
    point = (
        select(Measurement.id)
        .where(
            Measurement.run_id == Run.id,
            Measurement.precision == precision,
            Measurement.threads == threads,
        )
        .exists()
    )
    stmt = select(Run.id, Run.tags, Run.started_at, Run.environment_id).where(scope.runs(), point)
    keys = ("run_id", "run_tags", "run_started_at", "environment_id")
    with db.reading() as s:
        return [dict(zip(keys, row, strict=True)) for row in s.execute(stmt)]


def widest_environment(
    db: Database,
    scope: Scope,
    *,
    precision: str,
    threads: int,
    run_ids: Sequence[int] | None = None,
    exclude: Sequence[int] = (),
) -> int | None:
    """The environment that measured the most kernels in ``scope``'s runs (``run_ids``
    only, ``exclude`` not), the newest of equals: the baselines need every kernel of one
    environment, and a later partial re-run in a new environment should not hide them."""
    stmt = (
        select(
            Run.environment_id,
            func.count(func.distinct(Kernel.name)),
            func.max(Run.started_at),
        )
        .select_from(Measurement)
        .join(Run, Measurement.run_id == Run.id)
        .join(Kernel, Measurement.kernel_id == Kernel.id)
        .where(
            scope.runs(),
            Measurement.precision == precision,
            Measurement.threads == threads,
        )
        .group_by(Run.environment_id)
    )
    if run_ids is not None:
        stmt = stmt.where(Measurement.run_id.in_(list(run_ids)))
    if exclude:
        stmt = stmt.where(Measurement.run_id.not_in(list(exclude)))
    with db.reading() as s:
        found = [(int(e), int(n), when) for e, n, when in s.execute(stmt)]
    return max(found, key=lambda f: (f[1], f[2]))[0] if found else None


def kernel_names(db: Database) -> set[str]:
    """The names of every kernel the database holds, of any version."""
    with db.session() as s:
        return set(s.scalars(select(Kernel.name)))


def measured_kernels(db: Database, scope: Scope) -> list[str]:
    """The names of the kernels measured in ``scope``'s runs, sorted: per kernel, whether
    one point of it is in the scope (the kernel index), not a scan of every point."""
    in_scope = (
        select(Measurement.id)
        .join(Run, Measurement.run_id == Run.id)
        .where(Measurement.kernel_id == Kernel.id, scope.runs())
        .exists()
    )
    with db.reading() as s:
        return sorted(set(s.scalars(select(Kernel.name).where(in_scope))))


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
