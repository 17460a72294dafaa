"""Summary statistics of a measured point's timing samples.

docs/design.md "Measurement method": take several samples, store all of them, and
summarise by the median (robust to the occasional descheduled sample on a
shared machine) and the minimum (the least-disturbed sample); the spread is
reported as the interquartile range and the coefficient of variation, and a
point whose CV exceeds :data:`NOISY_CV` is *flagged* rather than silently used.

The 10 % threshold is pyperf's: it warns that a benchmark "looks unstable"
when the standard deviation is greater than 10 % of the mean.  Both the
collectors and regression tracking use this one definition.

Everything here is numpy alone, in the arithmetic of the scipy.stats functions it
replaces (``variation``, ``iqr``, ``quantile``), so the stored figures are the same
to the last bit: importing scipy.stats costs about a second, and its per-call
wrappers about a millisecond, which ``compare`` of a run of 200 points paid 800
times (docs/findings/ab-comparison.md, "At a year of history").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

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


def quantiles(x: np.ndarray, p: Sequence[float]) -> np.ndarray:
    """Quantiles ``p`` of ``x`` along its last axis, Hyndman & Fan's definition 7 ("linear",
    the default of R, numpy and scipy; Hyndman & Fan 1996, The American Statistician
    50(4)) in the operations of :func:`scipy.stats.quantile`, not numpy's (the two round
    differently in the last bit).  A slice holding a NaN gives NaN, as scipy's does."""
    y = np.sort(x, axis=-1)
    q = np.asarray(p, dtype=float)
    n = np.float64(y.shape[-1])
    jg = q * n + (1 - q)
    jp1 = jg // 1
    j = jp1 - 1
    g = jg % 1
    g[j < 0] = 0
    lower = np.clip(j, 0.0, n - 1).astype(np.int64)
    upper = np.clip(jp1, 0.0, n - 1).astype(np.int64)
    res = (1 - g) * y[..., lower] + g * y[..., upper]
    res[np.isnan(y).any(axis=-1)] = np.nan
    return res


def variation(x: np.ndarray) -> float:
    """Coefficient of variation with the sample (ddof=1) standard deviation, as
    :func:`scipy.stats.variation` computes it: the population std scaled by sqrt(n/(n-1))."""
    n = np.float64(x.size)
    return float(np.std(x) * (n / (n - 1)) ** 0.5 / np.mean(x))


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
    cv = variation(x) if x.size > 1 and mean != 0 else 0.0
    low, high = quantiles(x, (0.25, 0.75))
    return SampleStats(
        n=int(x.size),
        t_min=float(np.min(x)),
        t_median=float(np.median(x)),
        t_iqr=float(high - low),
        t_cv=cv,
        noisy=cv > NOISY_CV,
    )
