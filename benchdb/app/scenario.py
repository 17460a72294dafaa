"""The scenario explorer: every decomposition of every rank count, ranked by predicted time.

Paper 003 section I: the point of the lookup is to compare deployment
scenarios (process counts, decompositions) without running them; paper 001
section 5 uses the validated model for what-if studies.  Energy to solution
(paper 000 section 5) is shown beside the time when power parameters are given.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..comm.params import CommParams
from ..errors import UserError
from .decomposition import decompositions
from .energy import PowerModel
from .model import AppCase, AppPrediction, ModelOptions, predict_app


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


def explore(
    db: Any,
    cases: Sequence[AppCase],
    comm: CommParams | None,
    options: ModelOptions,
    *,
    power: PowerModel | None = None,
    cores: int = 1,
) -> list[dict[str, Any]]:
    """Predictions ranked fastest first, each with its breakdown, dominant term and energy."""
    preds = predict_app(db, cases, comm, options)
    rows = []
    for pred in sorted(preds, key=lambda p: p.total_s):
        row = pred.to_dict()
        row["energy"] = energy_of(pred, power, cores, options.ranks_per_node)
        rows.append(row)
    best = rows[0]["total_s"] if rows else 0.0
    for rank, row in enumerate(rows, start=1):
        row["rank"] = rank
        row["vs_best"] = row["total_s"] / best if best > 0 else None
    return rows
