"""The postal (Hockney) model, piecewise by protocol regime, and its fit.

Kerbyson & Jones (paper 001, eq. 10) and Choi et al. (paper 002, eq. 1) model a
message of ``n`` bytes as ``T(n) = α + β·n``, with separate (α, β) for each
protocol regime (short / eager / rendezvous): MPI switches protocol at fixed
sizes, so the line has jumps.  POP's Table 3 gives such piecewise values by
hand; here the breakpoints are found from the ping-pong data, as Netgauge
does: try every segmentation of the sorted sizes into 1..K contiguous
regimes, fit each regime by least squares, and add a regime only where it
cuts the squared error by :data:`SPLIT_GAIN` (more regimes only where the
data demand them).  The error that matters for prediction is relative, so each point is
weighted by ``1/t`` and (α, β) are constrained non-negative
(``scipy.optimize.nnls``).  Pure numpy/scipy: the prediction path imports it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy.optimize import nnls

MAX_REGIMES = 4
MIN_POINTS_PER_REGIME = 3
SPLIT_GAIN = 5.0
"""A further regime must cut the squared relative error by this factor: splitting
pure noise (the best of ~N breakpoints, two more parameters) rarely gains 5x,
a real protocol switch gains far more."""


@dataclass(frozen=True)
class PostalRegime:
    """``T = alpha + beta·n`` for ``min_bytes <= n <= max_bytes`` (``None``: unbounded)."""

    name: str
    min_bytes: int
    max_bytes: int | None
    alpha: float  # seconds
    beta: float  # seconds per byte

    def time(self, nbytes: float) -> float:
        return self.alpha + self.beta * nbytes

    def contains(self, nbytes: float) -> bool:
        return nbytes >= self.min_bytes and (self.max_bytes is None or nbytes <= self.max_bytes)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class PiecewisePostal:
    """Regimes ordered by size; together they cover every message size."""

    regimes: tuple[PostalRegime, ...]

    def regime(self, nbytes: float) -> PostalRegime:
        """The regime a message of ``nbytes`` falls in (the last one beyond the data)."""
        for r in self.regimes:
            if r.max_bytes is None or nbytes <= r.max_bytes:
                return r
        return self.regimes[-1]

    def time(self, nbytes: float) -> float:
        """One-way time of one message (paper 001 eq. 10 with C = 1)."""
        return self.regime(nbytes).time(nbytes)

    @property
    def latency(self) -> float:
        """α of the smallest-message regime: the "MPI latency" of POP's Table 3."""
        return self.regimes[0].alpha

    def to_dict(self) -> dict[str, Any]:
        return {"regimes": [r.to_dict() for r in self.regimes]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PiecewisePostal:
        return cls(tuple(PostalRegime(**r) for r in data["regimes"]))


@dataclass(frozen=True)
class PostalFit:
    """A fitted piecewise model and how well it reproduces its own data."""

    model: PiecewisePostal
    sizes: tuple[int, ...]
    measured: tuple[float, ...]
    rel_errors: tuple[float, ...]  # (model - measured) / measured, per size

    def accuracy(self) -> dict[str, Any]:
        """Median and max |relative error|, overall and per regime."""
        err = np.abs(np.asarray(self.rel_errors))
        per_regime = {}
        for r in self.model.regimes:
            mask = np.array([r.contains(s) for s in self.sizes])
            if mask.any():
                per_regime[r.name] = {
                    "points": int(mask.sum()),
                    "median_rel_error": float(np.median(err[mask])),
                    "max_rel_error": float(np.max(err[mask])),
                }
        return {
            "points": len(self.sizes),
            "median_rel_error": float(np.median(err)),
            "max_rel_error": float(np.max(err)),
            "regimes": per_regime,
        }


def _fit_line(n: np.ndarray, t: np.ndarray) -> tuple[float, float, float]:
    """Non-negative (α, β) minimising Σ((α + βn − t)/t)²; returns (α, β, residual²)."""
    a = np.column_stack([1.0 / t, n / t])
    coef, rnorm = nnls(a, np.ones_like(t))
    return float(coef[0]), float(coef[1]), float(rnorm**2)


def _regime_names(k: int) -> list[str]:
    if k <= 3:
        return ["short", "eager", "rendezvous"][3 - k :] if k > 1 else ["all"]
    return ["short", "eager", "rendezvous", *[f"rendezvous-{i}" for i in range(2, k - 1)]]


def fit_piecewise(
    sizes: Sequence[int],
    times: Sequence[float],
    *,
    max_regimes: int = MAX_REGIMES,
    min_points: int = MIN_POINTS_PER_REGIME,
) -> PostalFit:
    """Fit the piecewise postal model to (size, one-way time) points.

    Dynamic programming over contiguous segmentations (sizes sorted); each
    segment is a weighted non-negative least-squares line; K regimes replace
    fewer only if their squared relative error is :data:`SPLIT_GAIN` times
    smaller than the best fewer-regime fit's.  A regime's ``max_bytes`` is its largest
    measured size; the last regime is open-ended.
    """
    order = np.argsort(np.asarray(sizes, dtype=float))
    n = np.asarray(sizes, dtype=float)[order]
    t = np.asarray(times, dtype=float)[order]
    if len(n) < 2:
        raise ValueError("the postal fit needs at least two message sizes")
    if np.any(t <= 0):
        raise ValueError("the postal fit needs positive times")
    npts = len(n)
    min_points = min(min_points, npts)
    cost: dict[tuple[int, int], tuple[float, float, float]] = {}
    for i in range(npts):
        for j in range(i + min_points, npts + 1):
            cost[(i, j)] = _fit_line(n[i:j], t[i:j])
    kmax = max(1, min(max_regimes, npts // min_points))
    inf = float("inf")
    best = np.full((kmax + 1, npts + 1), inf)
    prev = np.zeros((kmax + 1, npts + 1), dtype=int)
    best[0, 0] = 0.0
    for k in range(1, kmax + 1):
        for j in range(1, npts + 1):
            for i in range(0, j):
                if (i, j) in cost and best[k - 1, i] < inf:
                    c = best[k - 1, i] + cost[(i, j)][2]
                    if c < best[k, j]:
                        best[k, j], prev[k, j] = c, i
    k_best = 1
    for k in range(2, kmax + 1):
        if best[k, npts] * SPLIT_GAIN < best[k_best, npts]:
            k_best = k
    bounds = []
    j = npts
    for k in range(k_best, 0, -1):
        i = int(prev[k, j])
        bounds.append((i, j))
        j = i
    bounds.reverse()
    names = _regime_names(k_best)
    regimes = []
    for idx, (i, j) in enumerate(bounds):
        alpha, beta, _ = cost[(i, j)]
        regimes.append(
            PostalRegime(
                name=names[idx],
                min_bytes=0 if idx == 0 else int(n[bounds[idx - 1][1] - 1]) + 1,
                max_bytes=None if idx == len(bounds) - 1 else int(n[j - 1]),
                alpha=alpha,
                beta=beta,
            )
        )
    model = PiecewisePostal(tuple(regimes))
    pred = np.array([model.time(s) for s in n])
    return PostalFit(
        model=model,
        sizes=tuple(int(s) for s in n),
        measured=tuple(float(x) for x in t),
        rel_errors=tuple(float(x) for x in (pred - t) / t),
    )
