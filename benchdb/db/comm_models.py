"""Communication data and its fitted models in the database: the points of a ``comm``
run (written by the MPI collector, :mod:`benchdb.collectors.mpi.results`, as column
values), the run to fit, and the ``model`` rows fitted on it (:mod:`benchdb.comm.store`
fits them, :func:`store_models` keeps them).  Points and models go in and out as values."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from ..errors import UserError
from .engine import Database
from .models import CommMeasurement, Model, Run
from .run_records import RunRecord, run_record
from .runs import this_process_run
from .runstate import RunKind, RunStatus
from .scope import Scope, resolve_scope

if TYPE_CHECKING:
    import pandas as pd

COLUMNS = [
    "id", "run_id", "benchmark", "ranks", "nodes", "pairs", "placement", "message_bytes",
    "params_key", "params", "repetitions", "samples", "t_min", "t_median", "t_iqr", "t_cv",
    "flags",
]  # fmt: skip


@dataclass(frozen=True)
class FittedModel:
    """A model fitted on a run's points, before it is stored."""

    kind: str
    subject: str
    params: dict[str, Any]
    accuracy: dict[str, Any]
    data_hash: str


@dataclass(frozen=True)
class StoredModel(FittedModel):
    """A fitted model as its ``model`` row holds it."""

    id: int
    selector: dict[str, Any]


def _stored(row: Model) -> StoredModel:
    return StoredModel(
        kind=row.kind,
        subject=row.subject,
        params=dict(row.params or {}),
        accuracy=dict(row.accuracy or {}),
        data_hash=row.data_hash,
        id=row.id,
        selector=dict(row.selector or {}),
    )


PointKey = tuple[str, int, int, str, int, str]
"""(benchmark, ranks, pairs, placement, message_bytes, params_key): a point within a run."""


def new_comm_run(
    db: Database,
    *,
    kind: str,
    status: str,
    config: dict[str, Any],
    tags: list[str],
    points: Iterable[Mapping[str, Any]] = (),
) -> int:
    """A run of this process holding ``points`` (``comm_measurement`` column values), in
    one transaction; its id."""
    with db.session() as s:
        run = this_process_run(s, kind=kind, status=status, config=config, tags=tags)
        s.add_all(CommMeasurement(run_id=run.id, **p) for p in points)
        return run.id


def add_comm_point(db: Database, run_id: int, point: Mapping[str, Any]) -> None:
    """Commit one point (column values) of run ``run_id``, in its own transaction."""
    with db.session() as s:
        s.add(CommMeasurement(run_id=run_id, **point))


def continue_comm_run(db: Database, run_id: int, hosts: Iterable[str]) -> frozenset[PointKey]:
    """Add ``hosts`` to the hosts of the claimed run ``run_id``; the points it holds."""
    with db.session() as s:
        run = s.get_one(Run, run_id)
        run.config = {**run.config, "hosts": sorted({*run.config.get("hosts", ()), *hosts})}
        rows = s.scalars(select(CommMeasurement).where(CommMeasurement.run_id == run_id))
        return frozenset(
            (r.benchmark, r.ranks, r.pairs, r.placement, r.message_bytes, r.params_key)
            for r in rows
        )


def comm_frame(db: Database, run_id: int) -> pd.DataFrame:
    """Every point of one run, one row each (SI units)."""
    import pandas as pd  # here: the MPI collector's ranks write points without it

    with db.session() as s:
        rows = s.scalars(
            select(CommMeasurement)
            .where(CommMeasurement.run_id == run_id)
            .order_by(CommMeasurement.id)
        ).all()
        return pd.DataFrame([{c: getattr(r, c) for c in COLUMNS} for r in rows], columns=COLUMNS)


def latest_run(
    db: Database, machine: str | None, run_id: int | None = None, host: str | None = None
) -> tuple[Scope, RunRecord]:
    """The scope and its newest complete ``comm`` run (or run ``run_id``)."""
    with db.reading() as s:
        scope = resolve_scope(s, machine, host)
        stmt = select(Run).where(scope.runs(), Run.kind == RunKind.COMM)
        if run_id is not None:
            run = s.scalars(stmt.where(Run.id == run_id)).first()
            if run is None:
                raise UserError(f"run {run_id} is not a comm run of {scope.label}")
        else:
            run = s.scalars(
                stmt.where(Run.status == RunStatus.COMPLETE).order_by(Run.id.desc())
            ).first()
            if run is None:
                raise UserError(
                    f"{scope.label} has no communication data; run "
                    "`benchdb comm collect --ranks 2` first, or predict with --machine-file"
                )
        return scope, run_record(run)


def store_models(
    db: Database,
    scope: Scope,
    run: RunRecord,
    fitted: Sequence[FittedModel],
    selector: dict[str, Any],
) -> list[StoredModel]:
    """Store each of ``fitted`` (of ``run``, chosen by ``selector``) for ``scope``'s class
    unless a model of the same kind, subject and data is stored already; every one as
    stored."""
    rows = []
    with db.session() as s:
        for f in fitted:
            key = dict(
                kind=f.kind,
                subject=f.subject,
                node_class_id=scope.node_class_id,
                data_hash=f.data_hash,
            )
            row = s.scalars(select(Model).filter_by(**key)).first()
            if row is None:
                row = Model(
                    **key,
                    machine_id=run.machine_id,
                    environment_id=run.environment_id,
                    params=f.params,
                    selector=selector,
                    accuracy=f.accuracy,
                )
                s.add(row)
                s.flush()
            rows.append(_stored(row))
    return rows


def comm_models(
    db: Database,
    machine: str | None = None,
    host: str | None = None,
    kinds: tuple[str, ...] | None = None,
) -> tuple[Scope, list[StoredModel]]:
    """The scope and its communication models, oldest first: the class's, or those fitted
    on the runs of its one host; of ``kinds`` (default: every ``comm.*``)."""
    with db.reading() as s:
        scope = resolve_scope(s, machine, host)
        stmt = select(Model).where(Model.node_class_id == scope.node_class_id)
        if scope.host_id is not None:
            stmt = stmt.where(Model.machine_id == scope.host_id)
        kind = Model.kind.in_(kinds) if kinds else Model.kind.startswith("comm.")
        return scope, [_stored(r) for r in s.scalars(stmt.where(kind).order_by(Model.id))]
