"""Summary statistics of a measured point's timing samples.

docs/design.md "Measurement method": take several samples, store all of them, and
summarise by the median (robust to the occasional descheduled sample on a
shared machine) and the minimum (the least-disturbed sample); the spread is
reported as the interquartile range and the coefficient of variation, and a
point whose CV exceeds :data:`NOISY_CV` is *flagged* rather than silently used.

The 10 % threshold is pyperf's: it warns that a benchmark "looks unstable"
when the standard deviation is greater than 10 % of the mean.  Both the
collectors and regression tracking use this one definition.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from .verdicts import Flag

NOISY_CV = 0.10
"""A point is noisy when ``std / mean`` of its samples exceeds this (pyperf's rule)."""

UNSTEADY_FLAGS = frozenset(Flag)
"""Flags of a point the collector could not measure steadily: ``noisy`` by the CV rule,
``disturbed`` by the operating system's evidence (:mod:`benchdb.evidence`: too few of
its samples held their core).  Readers of the flags treat both alike."""


@dataclass(frozen=True)
class SampleStats:
    """Summary of ``n`` samples, in the samples' unit (seconds per repetition)."""

    n: int
    t_min: float
    t_median: float
    t_iqr: float
    t_cv: float
    noisy: bool


def summarize(samples: Sequence[float]) -> SampleStats:
    """Median, minimum, IQR and coefficient of variation (sample std, ddof=1, over mean).

    One sample has no spread: its CV is 0 and it is not flagged noisy (the
    collectors never store fewer than five).  Raises ``ValueError`` on an
    empty sequence or a non-finite sample.
    """
    x = np.asarray(samples, dtype=float)
    if x.size == 0:
        raise ValueError("summarize() needs at least one sample")
    if not np.all(np.isfinite(x)):
        raise ValueError("summarize() got a non-finite sample")
    mean = float(np.mean(x))
    cv = float(stats.variation(x, ddof=1)) if x.size > 1 and mean != 0 else 0.0
    return SampleStats(
        n=int(x.size),
        t_min=float(np.min(x)),
        t_median=float(np.median(x)),
        t_iqr=float(stats.iqr(x)),
        t_cv=cv,
        noisy=cv > NOISY_CV,
    )
