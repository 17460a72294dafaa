"""``roofline``: min(peak, AI x bandwidth of the level the footprint resides in).

Williams et al.'s roofline, cache-aware (Treibig & Hager; ESCAPE D3.5 Figs.
17-18): one bandwidth ceiling per data cache and for memory, each the best
median bandwidth any STREAM kernel (``stream.*``, STREAM counting) reached at
footprints that reside in that level (above the previous level's capacity, up
to this one's).  A level no STREAM point fell in borrows the ceiling of the
nearest level that has one.

The compute ceiling is the best flop rate *measured* at an L1-resident
footprint by any kernel (a theoretical peak is, as paper 003 §IV-C found,
unreachable by real loops and would only make the baseline worse); with no
L1-resident point, the best measured flop rate anywhere.

AI is the kernel's flops per byte (Table I loads + stores x element size).  A
data-only kernel is predicted at the level's bandwidth, in B/s.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..basis import RateBasis
from ..machine_data import MachineData
from .baseline_model import BASELINES


def bandwidths(params: dict[str, Any]) -> np.ndarray:
    return np.array(
        [np.nan if c["bandwidth"] is None else c["bandwidth"] for c in params["ceilings"]]
    )


def intensity(basis: RateBasis) -> float:
    """Flops per byte; NaN for a kernel that moves no counted bytes."""
    b = basis.bytes_per_point
    return basis.flops_per_point / b if b > 0 else float("nan")


def attainable(basis: RateBasis, peak: float | None, bandwidth: np.ndarray) -> np.ndarray:
    """Rate in the kernel's unit given the bandwidth it gets (shared with ``escape``)."""
    if basis.unit == "B/s":
        return bandwidth
    if basis.unit != "flop/s" or peak is None:
        return np.full_like(bandwidth, np.nan)
    return np.minimum(peak, intensity(basis) * bandwidth)


class Roofline:
    name = "roofline"
    summary = "min(measured peak, AI x STREAM bandwidth of the resident cache level)"

    def fit(self, data: MachineData) -> dict[str, Any]:
        levels = data.level_capacities()
        best = [0.0] * len(levels)
        source = [""] * len(levels)
        for name, kc in data.curves.items():
            if not name.startswith("stream."):
                continue
            lvl = data.level_of(kc.curve.footprint)
            for i in np.unique(lvl):
                bw = float(np.median(kc.byte_rate[lvl == i]))
                if bw > best[i]:
                    best[i], source[i] = bw, name
        have = [i for i, b in enumerate(best) if b > 0]
        ceilings = []
        for i, (level, _cap) in enumerate(levels):
            j = min(have, key=lambda h: abs(h - i)) if have else None
            ceilings.append(
                {
                    "level": level,
                    "bandwidth": best[j] if j is not None else None,
                    "from": source[j] if j is not None else None,
                    "borrowed_from": levels[j][0] if j is not None and j != i else None,
                }
            )
        l1 = levels[0][1]
        flops = [
            (float(r), name, float(x))
            for name, kc in data.curves.items()
            if kc.basis.unit == "flop/s"
            for x, r in zip(kc.curve.footprint, kc.curve.rate, strict=True)
        ]
        resident = [f for f in flops if f[2] <= l1] or flops
        peak = max(resident) if resident else (None, None, None)
        return {
            "capacities": [c for _, c in levels[:-1]],
            "ceilings": ceilings,
            "peak_flops": peak[0],
            "peak_from": {"kernel": peak[1], "footprint_bytes": peak[2]},
        }

    def evaluate(
        self, params: dict[str, Any], basis: RateBasis, footprint: np.ndarray
    ) -> np.ndarray:
        lvl = np.searchsorted(np.asarray(params["capacities"]), np.asarray(footprint, dtype=float))
        return attainable(basis, params["peak_flops"], bandwidths(params)[lvl])


BASELINES.register(Roofline())
