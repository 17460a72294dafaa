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

Cost: exact up to :data:`EXACT_MAX` runs -- O(n^2) segment medians, computed one
segment length at a time over all windows (numpy), and O(k n^2) for the recursion.  A
longer series (a year of CI runs holds 10^4-10^5) is solved as asv solves it, by an
approximation in linear time (asv's ``solve_potts_approx``: an exact solver on a
reduced problem, then boundaries refined): here the series is cut into
:data:`EXACT_MAX` blocks of consecutive runs, the exact fit runs on the blocks'
medians, and each boundary it finds is moved, within a block either side, to where the
two levels it separates fit the runs best; the levels are then the medians of the
refined segments.  A step lasting fewer runs than a block is not resolved there.
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

EXACT_MAX = 200
"""Longest series fitted exactly; longer ones are fitted on this many blocks."""


def _segment_tables(y: np.ndarray, min_size: int) -> tuple[np.ndarray, np.ndarray]:
    """``cost[i, j]`` = L1 deviation of ``y[i:j]`` from its median ``med[i, j]``."""
    n = y.size
    cost = np.full((n + 1, n + 1), np.inf)
    med = np.full((n + 1, n + 1), np.nan)
    for length in range(min_size, n + 1):
        windows = np.lib.stride_tricks.sliding_window_view(y, length)
        m = np.median(windows, axis=1)
        starts = np.arange(n - length + 1)
        med[starts, starts + length] = m
        cost[starts, starts + length] = np.abs(windows - m[:, None]).sum(axis=1)
    return cost, med


def _exact_segments(
    y: np.ndarray, beta: float, min_size: int, max_segments: int
) -> list[tuple[int, int, float]]:
    """The exact fit: dynamic programming over every segmentation, then the criterion."""
    n = y.size
    cost, med = _segment_tables(y, min_size)
    kmax = min(max_segments, n // min_size)
    best = np.full((kmax + 1, n + 1), np.inf)
    back = np.zeros((kmax + 1, n + 1), dtype=int)
    best[0, 0] = 0.0
    for k in range(1, kmax + 1):  # best[k, j] = min over i of best[k-1, i] + cost[i, j]
        cand = best[k - 1][:, None] + cost
        back[k] = np.argmin(cand, axis=0)
        best[k] = cand[back[k], np.arange(n + 1)]
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


def _refined(y: np.ndarray, cuts: list[int], width: int, min_size: int) -> list[int]:
    """Each cut moved within ``width`` runs to where the medians of the segments on either
    side (as first cut) fit the runs between best, keeping ``min_size`` runs a segment."""
    out = list(cuts)
    edges = [0, *cuts, y.size]
    for c in range(1, len(edges) - 1):
        a, cut, d = out[c - 2] if c > 1 else 0, edges[c], edges[c + 1]
        left = float(np.median(y[a:cut]))
        right = float(np.median(y[cut:d]))
        lo, hi = max(a + min_size, cut - width), min(d - min_size, cut + width)
        if hi <= lo:
            continue
        window = y[lo:hi]
        # cost of putting the cut at lo + t: runs lo..lo+t-1 fit left, the rest fit right
        to_left = np.concatenate(([0.0], np.cumsum(np.abs(window - left))))
        to_right = np.concatenate((np.cumsum(np.abs(window - right)[::-1])[::-1], [0.0]))
        out[c - 1] = lo + int(np.argmin(to_left + to_right))
    return out


def _coarse_segments(
    y: np.ndarray, beta: float, min_size: int, max_segments: int
) -> list[tuple[int, int, float]]:
    """The approximate fit of a long series (module docstring): exact on block medians,
    boundaries refined on the runs."""
    edges = np.linspace(0, y.size, EXACT_MAX + 1).round().astype(int)
    blocks = np.array([np.median(y[a:b]) for a, b in itertools.pairwise(edges)])
    coarse = _exact_segments(blocks, beta, 1, max_segments)
    width = int(np.max(np.diff(edges)))
    cuts = _refined(y, [int(edges[start]) for start, _, _ in coarse[1:]], width, min_size)
    bounds = [0, *cuts, y.size]
    return [(a, b, float(np.median(y[a:b]))) for a, b in itertools.pairwise(bounds)]


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
    if n > EXACT_MAX:
        return _coarse_segments(y, beta, min_size, max_segments)
    return _exact_segments(y, beta, min_size, max_segments)


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
