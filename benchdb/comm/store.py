"""Fitting the communication models from the database, storing and loading them.

``fit_models`` reads the ``comm_measurement`` rows of one run (by default the
latest complete ``comm`` run of the node class, or of one host with ``--host``:
:mod:`benchdb.db.scope`) and stores one ``model`` row per fitted model, of the
class and of the run's host:

* ``comm.postal``, subject = placement: the piecewise postal fit of the
  ping-pong medians (:mod:`.postal`), accuracy = fit error per regime;
* ``comm.exchange``, subject = placement: the same piecewise fit of the
  ``MPI_Sendrecv`` benchmark (both directions at once: a halo's unit);
* ``comm.maxrate``, subject = placement: per postal regime, the max-rate fit
  of the multi-pair ping-pong with k = 1 from the ping-pong (:mod:`.maxrate`),
  or its postal fallback and why; k is the number of a node's processes that
  communicate at once, counted on the job's measured rank-to-node mapping
  (``params["k_per_node"]``; the number of pairs for points stored without it);
* ``comm.allreduce``, subject ``allreduce``: the measured medians per rank
  count and size.

``data_hash`` is the content hash of the input rows, so fitting unchanged data
again stores nothing new.  :func:`load_params` turns the newest models of a
node class (or of the runs of one host) into :class:`~.params.CommParams` for
prediction.  The rows are read and written by :mod:`benchdb.db.comm_models`.
"""

from __future__ import annotations

import pandas as pd

from ..db.comm_models import (
    FittedModel,
    StoredModel,
    comm_frame,
    comm_models,
    latest_run,
    store_models,
)
from ..db.engine import Database
from ..db.run_records import RunRecord
from ..db.scope import Scope
from ..errors import UserError
from ..hashing import content_hash
from .allreduce_model import AllreduceModel
from .maxrate import MaxRateRegime, fit_regime
from .params import CommParams
from .postal import PiecewisePostal, fit_piecewise


def _input_hash(frame: pd.DataFrame) -> str:
    keep = ["benchmark", "ranks", "pairs", "placement", "message_bytes", "params_key", "samples"]
    return content_hash(frame[keep].to_dict(orient="records"))


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
        single = pp[pp.placement == placement].assign(k=1)
        multi = pairs[pairs.placement == placement]
        multi = multi.assign(
            k=[p.get("k_per_node", n) for p, n in zip(multi.params, multi.pairs, strict=True)]
        )
        data = pd.concat([single, multi])
        regimes = []
        for r in model.regimes:
            inside = data[[r.contains(n) for n in data.message_bytes]]
            regimes.append(
                fit_regime(
                    r,
                    inside.message_bytes.tolist(),
                    inside.k.tolist(),
                    inside.t_median.tolist(),
                    short=r is model.regimes[0] and len(model.regimes) > 2,
                ).to_dict()
            )
        out.append(
            FittedModel("comm.maxrate", placement, {"regimes": regimes},
                        {"k_values": sorted(set(data.k.tolist()))}, _input_hash(data))
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
    db: Database, machine: str | None = None, run_id: int | None = None, host: str | None = None
) -> tuple[Scope, RunRecord, list[StoredModel]]:
    """Fit and store (idempotently) every model of the run; returns the models as stored."""
    scope, run = latest_run(db, machine, run_id, host)
    frame = comm_frame(db, run.id)
    if not (frame.benchmark == "pingpong").any():
        raise UserError(
            f"run {run.id} has no ping-pong data to fit; collect with "
            "`benchdb comm collect --benchmarks pingpong`"
        )
    selector = {"run_id": run.id, "benchmarks": sorted(set(frame.benchmark))}
    return scope, run, store_models(db, scope, run, fit_frame(frame), selector)


def fit_accuracy(
    db: Database, machine: str | None = None, host: str | None = None
) -> dict[tuple[str, str], dict]:
    """Fit accuracy of the newest postal and exchange models, by (kind, placement)."""
    _, models = comm_models(db, machine, host, ("comm.postal", "comm.exchange"))
    return {(m.kind, m.subject): m.accuracy for m in models}


def load_params(db: Database, machine: str | None = None, host: str | None = None) -> CommParams:
    """The newest fitted models of a node class (or of one host's runs) as parameters."""
    scope, models = comm_models(db, machine, host)
    newest = {(m.kind, m.subject): m for m in models}
    name = scope.label
    postal = {
        subj: PiecewisePostal.from_dict(r.params)
        for (kind, subj), r in newest.items()
        if kind == "comm.postal"
    }
    if not postal:
        raise UserError(
            f"{name} has no fitted communication models; run `benchdb comm collect` "
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
