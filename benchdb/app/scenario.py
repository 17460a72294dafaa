"""The scenario explorer: every decomposition of every rank count, ranked by predicted time.

Paper 003 section I: the point of the lookup is to compare deployment
scenarios (process counts, decompositions) without running them; paper 001
section 5 uses the validated model for what-if studies.  Energy to solution
(paper 000 section 5) is shown beside the time when power parameters are given.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..comm.params import CommParams
from ..errors import UserError
from .application import Application
from .decomposition import decompositions
from .energy import PowerModel
from .model import AppCase, AppPrediction, ModelOptions, predict_app
from .shallow_app import SHALLOW_APP

if TYPE_CHECKING:
    from ..db.engine import Database


def scenario_cases(
    grid: tuple[int, int], ranks: Sequence[int], steps: int, precision: str, diag_every: int = 0
) -> list[AppCase]:
    """Every exact decomposition of each rank count; UserError if a count has none."""
    cases = []
    for p in ranks:
        if p < 1:
            raise UserError(f"rank count {p} must be positive; e.g. --ranks 1,2,4")
        found = decompositions(grid, p)
        if not found:
            raise UserError(
                f"no px x py = {p} divides the grid {grid[0]}x{grid[1]}; choose rank counts "
                "whose factors divide the grid"
            )
        cases += [AppCase(grid, d, steps, precision, diag_every) for d in found]
    return cases


def energy_of(
    pred: AppPrediction, power: PowerModel | None, cores: int, ranks_per_node: int | None
) -> dict[str, Any] | None:
    """Estimated energy of a predicted run: every node of the job, its busy and idle cores."""
    if power is None:
        return None
    ranks = pred.case.decomp.ranks
    rpn = min(ranks_per_node or cores, ranks)
    nodes = math.ceil(ranks / rpn)
    return power.energy(pred.total_s, busy_cores=rpn, cores=max(cores, rpn), nodes=nodes)


@dataclass(frozen=True)
class RankedPrediction:
    """One scenario's prediction, its place (1: fastest), its time over the fastest's
    (None when the fastest predicts no time) and its energy (None without power data)."""

    rank: int
    prediction: AppPrediction
    vs_best: float | None
    energy: dict[str, Any] | None

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.prediction.to_dict(),
            "energy": self.energy,
            "rank": self.rank,
            "vs_best": self.vs_best,
        }


def explore(
    db: Database,
    cases: Sequence[AppCase],
    comm: CommParams | None,
    options: ModelOptions,
    *,
    power: PowerModel | None = None,
    cores: int = 1,
    app: Application = SHALLOW_APP,
) -> list[RankedPrediction]:
    """``app``'s runs ranked fastest first, each with its breakdown, dominant term and
    energy."""
    preds = sorted(predict_app(db, cases, comm, options, app), key=lambda p: p.total_s)
    best = preds[0].total_s if preds else 0.0
    return [
        RankedPrediction(
            rank,
            pred,
            pred.total_s / best if best > 0 else None,
            energy_of(pred, power, cores, options.ranks_per_node),
        )
        for rank, pred in enumerate(preds, start=1)
    ]
