"""``eq5``: memory-bound performance from compute intensity (paper 003 §IV-B, eq. 5).

    Perf = β · flops/mops + α

flops/mops are the reference flops and the loads + stores (words, with reuse)
per point of paper 003 Table I.  The paper fitted one (α, β) per machine on
the memory-resident size.  To judge it at every size we fit one (α, β) per
residence level -- each data cache and memory -- on every flop-counting
kernel's points whose footprint lies in that level; in memory that is the
paper's fit.  Data-only kernels (no flops) get no prediction.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..basis import RateBasis
from ..machine_data import MachineData
from .baseline_model import BASELINES


def intensity(basis: RateBasis) -> float:
    """flops / mops (words) per point, or NaN for a kernel that does not compute."""
    mops = basis.kernel.loads_per_point + basis.kernel.stores_per_point
    return basis.flops_per_point / mops if basis.unit == "flop/s" and mops > 0 else float("nan")


class Eq5:
    name = "eq5"
    summary = "paper 003 eq. 5, Perf = beta*flops/mops + alpha, one fit per cache level"

    def fit(self, data: MachineData) -> dict[str, Any]:
        levels = data.level_capacities()
        xs: list[list[float]] = [[] for _ in levels]
        ys: list[list[float]] = [[] for _ in levels]
        for kc in data.curves.values():
            ai = intensity(kc.basis)
            if np.isnan(ai):
                continue
            for lvl, rate in zip(data.level_of(kc.curve.footprint), kc.curve.rate, strict=True):
                xs[lvl].append(ai)
                ys[lvl].append(float(rate))
        out = []
        for (name, _cap), x, y in zip(levels, xs, ys, strict=True):
            if len(set(x)) >= 2:
                beta, alpha = np.polyfit(x, y, 1)
                out.append({"level": name, "alpha": float(alpha), "beta": float(beta), "n": len(x)})
            else:
                out.append({"level": name, "alpha": None, "beta": None, "n": len(x)})
        return {"levels": out, "capacities": [c for _, c in levels[:-1]]}

    def evaluate(
        self, params: dict[str, Any], basis: RateBasis, footprint: np.ndarray
    ) -> np.ndarray:
        ai = intensity(basis)
        lvl = np.searchsorted(np.asarray(params["capacities"]), np.asarray(footprint, dtype=float))
        coef = np.array(
            [
                (np.nan, np.nan) if p["beta"] is None else (p["alpha"], p["beta"])
                for p in params["levels"]
            ]
        )
        return coef[lvl, 1] * ai + coef[lvl, 0]


BASELINES.register(Eq5())
