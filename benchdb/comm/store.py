"""Fitting the communication models from the database, storing and loading them.

``fit_models`` reads the ``comm_measurement`` rows of one run (by default the
latest complete ``comm`` run of the machine) and stores one ``model`` row per
fitted model:

* ``comm.postal``, subject = placement: the piecewise postal fit of the
  ping-pong medians (:mod:`.postal`), accuracy = fit error per regime;
* ``comm.exchange``, subject = placement: the same piecewise fit of the
  ``MPI_Sendrecv`` benchmark (both directions at once: a halo's unit);
* ``comm.maxrate``, subject = placement: per postal regime, the max-rate fit
  of the multi-pair ping-pong with k = 1 from the ping-pong (:mod:`.maxrate`),
  or its postal fallback and why;
* ``comm.allreduce``, subject ``allreduce``: the measured medians per rank
  count and size.

``data_hash`` is the content hash of the input rows, so fitting unchanged data
again stores nothing new.  :func:`load_params` turns the newest models of a
machine into :class:`~.params.CommParams` for prediction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd
from sqlalchemy import select

from ..db.engine import Database
from ..db.models import CommMeasurement, Machine, Model, Run
from ..errors import UserError
from ..hashing import content_hash
from ..query import resolve_machine
from .allreduce import AllreduceModel
from .maxrate import MaxRateRegime, fit_regime
from .params import CommParams
from .postal import PiecewisePostal, fit_piecewise

COLUMNS = [
    "id", "run_id", "benchmark", "ranks", "nodes", "pairs", "placement", "message_bytes",
    "params_key", "params", "repetitions", "samples", "t_min", "t_median", "t_iqr", "t_cv",
    "flags",
]  # fmt: skip


def comm_frame(db: Database, run_id: int) -> pd.DataFrame:
    """Every point of one run, one row each (SI units)."""
    with db.session() as s:
        rows = s.scalars(
            select(CommMeasurement)
            .where(CommMeasurement.run_id == run_id)
            .order_by(CommMeasurement.id)
        ).all()
        return pd.DataFrame([{c: getattr(r, c) for c in COLUMNS} for r in rows], columns=COLUMNS)


def latest_run(db: Database, machine: str | None, run_id: int | None = None) -> tuple[Machine, Run]:
    """The machine and its newest complete ``comm`` run (or run ``run_id``)."""
    with db.session() as s:
        m = resolve_machine(s, machine)
        stmt = select(Run).where(Run.machine_id == m.id, Run.kind == "comm")
        if run_id is not None:
            run = s.scalars(stmt.where(Run.id == run_id)).first()
            if run is None:
                raise UserError(f"run {run_id} is not a comm run of machine {m.hostname} ({m.id})")
        else:
            run = s.scalars(stmt.where(Run.status == "complete").order_by(Run.id.desc())).first()
            if run is None:
                raise UserError(
                    f"machine {m.hostname} ({m.id}) has no communication data; run "
                    "`benchdb comm collect --ranks 2` first, or predict with --machine-file"
                )
        return m, run


def _input_hash(frame: pd.DataFrame) -> str:
    keep = ["benchmark", "ranks", "pairs", "placement", "message_bytes", "params_key", "samples"]
    return content_hash(frame[keep].to_dict(orient="records"))


@dataclass(frozen=True)
class FittedModel:
    kind: str
    subject: str
    params: dict[str, Any]
    accuracy: dict[str, Any]
    data_hash: str


def fit_frame(frame: pd.DataFrame) -> list[FittedModel]:
    """Fit every model the run's data allow (pure: no database)."""
    out: list[FittedModel] = []
    pp = frame[frame.benchmark == "pingpong"]
    postal_by_placement: dict[str, PiecewisePostal] = {}
    for placement, g in pp.groupby("placement"):
        fit = fit_piecewise(g.message_bytes.tolist(), g.t_median.tolist())
        postal_by_placement[str(placement)] = fit.model
        out.append(
            FittedModel("comm.postal", str(placement), fit.model.to_dict(), fit.accuracy(),
                        _input_hash(g))
        )  # fmt: skip
    for placement, g in frame[frame.benchmark == "exchange"].groupby("placement"):
        fit = fit_piecewise(g.message_bytes.tolist(), g.t_median.tolist())
        out.append(
            FittedModel("comm.exchange", str(placement), fit.model.to_dict(), fit.accuracy(),
                        _input_hash(g))
        )  # fmt: skip
    pairs = frame[frame.benchmark == "pairs"]
    for placement, model in postal_by_placement.items():
        single = pp[pp.placement == placement].assign(pairs=1)
        data = pd.concat([single, pairs[pairs.placement == placement]])
        regimes = []
        for r in model.regimes:
            inside = data[[r.contains(n) for n in data.message_bytes]]
            regimes.append(
                fit_regime(
                    r,
                    inside.message_bytes.tolist(),
                    inside.pairs.tolist(),
                    inside.t_median.tolist(),
                    short=r is model.regimes[0] and len(model.regimes) > 2,
                ).to_dict()
            )
        out.append(
            FittedModel("comm.maxrate", placement, {"regimes": regimes},
                        {"k_values": sorted(set(data.pairs.tolist()))}, _input_hash(data))
        )  # fmt: skip
    ar = frame[frame.benchmark == "allreduce"]
    if len(ar):
        measured = [
            [int(r.ranks), int(r.message_bytes), float(r.t_median)] for r in ar.itertuples()
        ]
        out.append(
            FittedModel("comm.allreduce", "allreduce", {"measured": measured},
                        {"points": len(measured)}, _input_hash(ar))
        )  # fmt: skip
    return out


def fit_models(
    db: Database, machine: str | None = None, run_id: int | None = None
) -> tuple[Machine, Run, list[Model]]:
    """Fit and store (idempotently) every model of the run; returns the model rows."""
    m, run = latest_run(db, machine, run_id)
    frame = comm_frame(db, run.id)
    if not (frame.benchmark == "pingpong").any():
        raise UserError(
            f"run {run.id} has no ping-pong data to fit; collect with "
            "`benchdb comm collect --benchmarks pingpong`"
        )
    fitted = fit_frame(frame)
    rows = []
    with db.session() as s:
        for f in fitted:
            key = dict(kind=f.kind, subject=f.subject, machine_id=m.id, data_hash=f.data_hash)
            row = s.scalars(select(Model).filter_by(**key)).first()
            if row is None:
                row = Model(
                    **key,
                    environment_id=run.environment_id,
                    params=f.params,
                    selector={"run_id": run.id, "benchmarks": sorted(set(frame.benchmark))},
                    accuracy=f.accuracy,
                )
                s.add(row)
                s.flush()
            rows.append(row)
    return m, run, rows


def load_params(db: Database, machine: str | None = None) -> CommParams:
    """The newest fitted models of a machine as prediction parameters."""
    with db.session() as s:
        m = resolve_machine(s, machine)
        models = s.scalars(
            select(Model)
            .where(Model.machine_id == m.id, Model.kind.startswith("comm."))
            .order_by(Model.id)
        ).all()
        newest = {(r.kind, r.subject): r for r in models}
        name = f"{m.hostname} (machine {m.id})"
    postal = {
        subj: PiecewisePostal.from_dict(r.params)
        for (kind, subj), r in newest.items()
        if kind == "comm.postal"
    }
    if not postal:
        raise UserError(
            f"machine {name} has no fitted communication models; run `benchdb comm collect` "
            "and `benchdb comm fit`, or predict with --machine-file"
        )
    exchange = {
        subj: PiecewisePostal.from_dict(r.params)
        for (kind, subj), r in newest.items()
        if kind == "comm.exchange"
    }
    maxrate = {
        subj: tuple(MaxRateRegime(**x) for x in r.params["regimes"])
        for (kind, subj), r in newest.items()
        if kind == "comm.maxrate"
    }
    ar = newest.get(("comm.allreduce", "allreduce"))
    allreduce = (
        AllreduceModel(tuple(tuple(x) for x in ar.params["measured"])) if ar is not None else None
    )
    return CommParams(
        name=name,
        source="fitted: " + ", ".join(sorted({f"model {r.id}" for r in newest.values()})),
        postal=postal,
        exchange=exchange,
        maxrate=maxrate,
        allreduce=allreduce,
    )
