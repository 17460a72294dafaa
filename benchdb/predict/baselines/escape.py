"""``escape``: ESCAPE D3.5's T = max(W·T_flop, Q·T_mop) per loop (seed 000, §4).

W is the flops, Q the bytes of one point; T_flop = 1/peak.  ESCAPE weights the
bandwidth of each memory level by the share of accesses it serves,
T_mop = 1 / (L1·V + L2·X + L3·Y + DRAM·Z).  We take the shares from the
footprint x and the capacities C_i: the fraction of the data that fits in
level i but not in i-1, min(1, C_i/x) - min(1, C_{i-1}/x), the rest from
memory.  With the roofline's ceilings and peak (same fit), this differs from
``roofline`` only in blending levels instead of stepping between them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..basis import RateBasis
from . import roofline
from .baseline_model import BASELINES


def shares(capacities: list[float], footprint: np.ndarray) -> np.ndarray:
    """(n, levels+1) fraction of each footprint held by each cache level and memory."""
    x = np.asarray(footprint, dtype=float)[:, None]
    held = np.minimum(1.0, np.asarray(capacities, dtype=float)[None, :] / x)
    cum = np.hstack([np.zeros((len(x), 1)), held, np.ones((len(x), 1))])
    return np.diff(cum, axis=1)


class Escape(roofline.Roofline):
    """The roofline's fit (ceilings and peak), its levels blended by residency."""

    name = "escape"
    summary = "ESCAPE T = max(W*T_flop, Q*T_mop), T_mop from residency-weighted level bandwidths"

    def evaluate(
        self, params: dict[str, Any], basis: RateBasis, footprint: np.ndarray
    ) -> np.ndarray:
        share = shares(params["capacities"], footprint)
        bw = roofline.bandwidths(params)
        return roofline.attainable(basis, params["peak_flops"], share @ bw)


BASELINES.register(Escape())
