"""A node class's communication models beside the data they were fitted to.

What ``benchdb comm show`` prints and ``benchdb report`` draws: the newest
fitted models (:func:`.store.load_params`), the points of the newest complete
``comm`` run, one row per placement and regime of the piecewise postal fits
(paper 001 eq. 10, paper 002 eq. 1) with the max-rate parameters of that
regime (paper 002 eq. 2-3) and the fit's error, and the halo exchanges
measured against the model (:func:`.halo_validation.halo_validation`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..db.comm_models import comm_frame, latest_run
from ..db.engine import Database
from ..units import fmt_bytes, fmt_seconds
from .halo_validation import halo_validation
from .params import CommParams
from .store import fit_accuracy, load_params

REGIME_COLUMNS: list[tuple[str, str, Callable[[Any], str] | None]] = [
    ("model", "model", None),
    ("placement", "placement", None),
    ("regime", "regime", None),
    ("min_bytes", "from", fmt_bytes),
    ("max_bytes", "to", fmt_bytes),
    ("alpha_s", "α", fmt_seconds),
    ("bandwidth_Bps", "1/β", lambda v: f"{fmt_bytes(v)}/s"),
    ("points", "points", None),
    ("median_rel_error", "median |err|", lambda v: f"{v:.1%}"),
    ("max_rel_error", "max |err|", lambda v: f"{v:.1%}"),
]
"""The table of :func:`regime_rows`: (key, header, formatter) as ``comm show`` prints it."""


@dataclass(frozen=True)
class CommSummary:
    """The fitted models of one machine and the measured run shown with them."""

    params: CommParams
    run_id: int
    frame: pd.DataFrame
    regimes: list[dict[str, Any]]
    halo: list[dict[str, Any]]


def regime_rows(
    params: CommParams, accuracy: dict[tuple[str, str], dict[str, Any]]
) -> list[dict[str, Any]]:
    """One row per placement and regime of the ping-pong (postal) and Sendrecv fits."""
    rows = []
    fits = [("postal", params.postal), ("exchange", params.exchange)]
    for kind, models in fits:
        for placement, model in models.items():
            acc = accuracy.get((f"comm.{kind}", placement), {}).get("regimes", {})
            for reg in model.regimes:
                mr = params.maxrate_regime(placement, reg.min_bytes) if kind == "postal" else None
                rows.append(
                    {
                        "model": kind,
                        "placement": placement,
                        "regime": reg.name,
                        "min_bytes": reg.min_bytes,
                        "max_bytes": reg.max_bytes,
                        "alpha_s": reg.alpha,
                        "beta_s_per_byte": reg.beta,
                        "bandwidth_Bps": 1 / reg.beta if reg.beta > 0 else None,
                        "maxrate": mr.to_dict() if mr else None,
                        "points": acc.get(reg.name, {}).get("points"),
                        "median_rel_error": acc.get(reg.name, {}).get("median_rel_error"),
                        "max_rel_error": acc.get(reg.name, {}).get("max_rel_error"),
                    }
                )
    return rows


def comm_summary(db: Database, machine: str | None = None, host: str | None = None) -> CommSummary:
    """The fitted models and newest comm run of a node class (or of ``host``);
    ``UserError`` naming the fix when it has no measured or no fitted communication data."""
    params = load_params(db, machine, host)
    _, run = latest_run(db, machine, host=host)
    frame = comm_frame(db, run.id)
    return CommSummary(
        params=params,
        run_id=run.id,
        frame=frame,
        regimes=regime_rows(params, fit_accuracy(db, machine, host)),
        halo=halo_validation(frame, params),
    )
