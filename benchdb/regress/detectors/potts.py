"""Step detection by an L1 Potts fit, as in asv (airspeed velocity).

The series is fitted by a piecewise-constant function: the segmentation
minimises the L1 cost ``S_k = sum_i |y_i - mu_seg(i)|`` for each number of
segments ``k`` (``mu`` = segment median), solved *exactly* by dynamic
programming (Friedrich et al., J. Comput. Graph. Stat. 17, 2008; asv solves
an approximation of the same problem).  The number of segments is the one
minimising asv's information criterion (its "bic-form", docs/step_detection):

    obj(k) = beta * ln(n) / n * k + ln(sigma_0 + S_k)

with ``beta`` = :data:`BETA` = 4 (asv's default) and the noise floor
``sigma_0`` = 0.1 x the smallest jump between segment levels (0.001 x the level
for one segment), which stops the criterion from rewarding a perfect fit by
one segment per point.  L1 rather than least squares: a single descheduled
run does not drag a level.  The noise is taken as independent (asv also fits
an AR(1) correlation; we do not).

Thresholds:

* ``min_size`` (default :data:`MIN_SIZE` = 2, as asv): a level must hold for
  this many runs, so a single outlier run is not a step; a change in the
  newest run alone shows only once a second run confirms it (use the
  ``zscore`` detector to judge a single new run).
* ``min_change`` (default 5 %): steps whose relative size is smaller are fitted
  but not reported, as asv's ``detect_regressions`` drops small jumps.
* ``max_segments`` (default :data:`MAX_SEGMENTS`): at most this many levels.

Cost: O(n^2) segment medians and O(k n^2) for the recursion; a few hundred
runs take well under a second.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

from .detector import DEFAULT_MIN_CHANGE, DETECTORS, Step

BETA = 4.0
"""asv's penalty: ``beta * ln(n) / n`` per segment in the criterion."""

MIN_SIZE = 2
"""Fewest runs a level must span (asv's ``min_size``)."""

MAX_SEGMENTS = 20
"""Most levels considered."""


def _segment_tables(y: np.ndarray, min_size: int) -> tuple[np.ndarray, np.ndarray]:
    """``cost[i, j]`` = L1 deviation of ``y[i:j]`` from its median ``med[i, j]``."""
    n = y.size
    cost = np.full((n + 1, n + 1), np.inf)
    med = np.full((n + 1, n + 1), np.nan)
    for i in range(n):
        for j in range(i + min_size, n + 1):
            seg = y[i:j]
            m = float(np.median(seg))
            med[i, j] = m
            cost[i, j] = float(np.abs(seg - m).sum())
    return cost, med


def fit_segments(
    values: Sequence[float],
    *,
    beta: float = BETA,
    min_size: int = MIN_SIZE,
    max_segments: int = MAX_SEGMENTS,
) -> list[tuple[int, int, float]]:
    """The chosen segmentation as ``(start, stop, median)`` triples covering the series."""
    y = np.asarray(values, dtype=float)
    n = y.size
    if n == 0:
        return []
    if n < 2 * min_size:
        return [(0, n, float(np.median(y)))]
    cost, med = _segment_tables(y, min_size)
    kmax = min(max_segments, n // min_size)
    best = np.full((kmax + 1, n + 1), np.inf)
    back = np.zeros((kmax + 1, n + 1), dtype=int)
    best[0, 0] = 0.0
    for k in range(1, kmax + 1):
        for j in range(k * min_size, n + 1):
            cand = best[k - 1, :j] + cost[:j, j]
            i = int(np.argmin(cand))
            best[k, j], back[k, j] = cand[i], i
    penalty = beta * math.log(n) / n
    chosen: list[tuple[int, int, float]] = []
    best_obj = math.inf
    for k in range(1, kmax + 1):
        if not math.isfinite(best[k, n]):
            continue
        bounds, j = [], n
        for kk in range(k, 0, -1):
            i = int(back[kk, j])
            bounds.append((i, j, float(med[i, j])))
            j = i
        bounds.reverse()
        levels = [m for _, _, m in bounds]
        if k > 1:
            sigma0 = 0.1 * min(abs(b - a) for a, b in itertools.pairwise(levels))
        else:
            sigma0 = 0.001 * abs(levels[0])
        obj = penalty * k + math.log(sigma0 + best[k, n] + 1e-300)
        if obj < best_obj:
            best_obj, chosen = obj, bounds
    return chosen


class PottsDetector:
    """asv-style L1 step fit; thresholds in the module docstring."""

    name = "potts"

    def __init__(
        self,
        *,
        min_change: float = DEFAULT_MIN_CHANGE,
        beta: float = BETA,
        min_size: int = MIN_SIZE,
        max_segments: int = MAX_SEGMENTS,
    ) -> None:
        self.min_change = min_change
        self.beta = beta
        self.min_size = min_size
        self.max_segments = max_segments

    def detect(self, values: Sequence[float]) -> list[Step]:
        segments = fit_segments(
            values, beta=self.beta, min_size=self.min_size, max_segments=self.max_segments
        )
        y = np.asarray(values, dtype=float)
        residual = sum(float(np.abs(y[a:b] - m).sum()) for a, b, m in segments)
        # mean absolute deviation from the fit, floored so that an exact fit scores finitely
        scale = max(residual / max(y.size, 1), 1e-9 * float(np.abs(y).max(initial=0.0)))
        steps = []
        for (_, _, before), (start, _, after) in itertools.pairwise(segments):
            jump = abs(after - before)
            if before > 0 and jump / before > self.min_change:
                steps.append(Step(index=start, before=before, after=after, score=jump / scale))
        return steps


DETECTORS.register(PottsDetector)
