"""Step detection by a lookback z-score, as in Conbench.

Each run's value is scored against the distribution of the runs before it
(Conbench docs, "The lookback z-score method"):

* the **centre** is the mean of the previous values since the last detected
  step, at most ``lookback`` of them (Conbench's ``DISTRIBUTION_COMMITS`` =
  :data:`LOOKBACK` = 100);
* the **spread** is the standard deviation of the earlier values' residuals
  from the mean of their own level (pooled over levels, Bessel-corrected), so
  that right after a step one new value is enough for the new centre while
  the spread carries over -- Conbench's argument for residuals;
* ``z = (value - centre) / spread``; a step is reported where ``|z|`` exceeds
  ``z_threshold`` (default :data:`Z_THRESHOLD` = 5, Conbench's default) *and*
  the relative change exceeds ``min_change`` (default 5 %), and the
  distribution restarts there (what Conbench's curated "distribution change"
  does by hand).

Unlike the Potts fit this judges the newest run alone, so a single
descheduled run shows as a step up followed by a step back.  At least
:data:`MIN_HISTORY` earlier values are needed before a value is scored, and
the spread is floored at :data:`REL_FLOOR` of the centre so that a perfectly
flat history does not turn rounding into an infinite z.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .detector import DEFAULT_MIN_CHANGE, DETECTORS, Step

Z_THRESHOLD = 5.0
"""Conbench's default z-score threshold."""

LOOKBACK = 100
"""Most earlier runs in the distribution (Conbench's ``DISTRIBUTION_COMMITS``)."""

MIN_HISTORY = 4
"""Earlier values needed before one is scored: Conbench needs two, but a spread from two
values is so uncertain that ordinary noise then scores far above 5 (seen on real series)."""

REL_FLOOR = 1e-3
"""Smallest spread, relative to the centre."""


def _pooled_spread(y: np.ndarray, levels: np.ndarray) -> float:
    """Bessel-corrected std of residuals from each level's mean, pooled over levels."""
    ss, dof = 0.0, 0
    for level in np.unique(levels):
        part = y[levels == level]
        ss += float(((part - part.mean()) ** 2).sum())
        dof += part.size - 1
    return (ss / dof) ** 0.5 if dof > 0 else float("nan")


class ZScoreDetector:
    """Conbench-style lookback z-score; thresholds in the module docstring."""

    name = "zscore"

    def __init__(
        self,
        *,
        min_change: float = DEFAULT_MIN_CHANGE,
        z_threshold: float = Z_THRESHOLD,
        lookback: int = LOOKBACK,
        min_history: int = MIN_HISTORY,
    ) -> None:
        self.min_change = min_change
        self.z_threshold = z_threshold
        self.lookback = lookback
        self.min_history = min_history

    def detect(self, values: Sequence[float]) -> list[Step]:
        y = np.asarray(values, dtype=float)
        level = np.zeros(y.size, dtype=int)  # which distribution each value belongs to
        start = 0  # first index of the current distribution
        steps: list[Step] = []
        for i in range(1, y.size):
            lo = max(0, i - self.lookback)
            if i - lo < self.min_history:
                level[i] = level[i - 1]
                continue
            centre = float(y[max(lo, start) : i].mean())
            spread = _pooled_spread(y[lo:i], level[lo:i])
            spread = max(spread if spread == spread else 0.0, REL_FLOOR * abs(centre))
            z = (y[i] - centre) / spread
            change = y[i] / centre - 1.0 if centre else 0.0
            if abs(z) > self.z_threshold and abs(change) > self.min_change:
                steps.append(Step(index=i, before=centre, after=float(y[i]), score=float(z)))
                start = i
                level[i] = level[i - 1] + 1
            else:
                level[i] = level[i - 1]
        return steps


DETECTORS.register(ZScoreDetector)
