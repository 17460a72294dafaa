"""A/B statistics for one measured point: did the contender get slower?

docs/design.md "Regression tracking": the ratio of medians with a significance
test *and* a minimum effect size.  For a point measured in a baseline run
(samples ``a``, seconds per repetition) and in a contender run (samples
``b``):

* **ratio** ``r = median(b) / median(a)``: above 1 the contender is slower.
* **confidence interval** of ``r`` at level ``1 - alpha``: a percentile
  bootstrap over the stored samples (:func:`scipy.stats.bootstrap`,
  :data:`N_RESAMPLES` resamples, a fixed seed so the same data always give
  the same interval).
* **p-value**: the two-sided Mann–Whitney U test of the two sample sets
  (:func:`scipy.stats.mannwhitneyu`), exact for the small sample counts the
  collectors store.  It makes no assumption of normality, which timing
  samples (skewed by descheduling) do not satisfy.  With five samples a side
  the smallest possible exact p-value is 2/252 = 0.0079, so the default
  :data:`DEFAULT_ALPHA` = 0.01 is reachable only when the two sets do not
  overlap at all: with few samples, only a clean separation counts.

Verdicts, with threshold ``t`` (default :data:`DEFAULT_THRESHOLD` = 5 %) and
the band ``[1/(1+t), 1+t]`` (symmetric in log ratio):

* ``slower`` / ``faster``: the samples are *separated* beyond the threshold
  (every contender sample above ``(1+t)`` times every baseline sample, or
  every one below ``1/(1+t)`` times it), or the change is significant
  (``p < alpha``) *and* ``r`` lies outside the band.  Separation needs no
  test: however noisy the point, a shift larger than all of its spread is a
  shift (a run compiled with ``NUMBA_OPT=0``, 20-80x slower, is slower at
  every point).  Noise widens the interval; it never hides such a shift.
* ``noisy``: not a change by those rules, but the data cannot rule one out:
  the confidence interval reaches outside the band.
* ``unchanged``: the interval lies inside the band.

A point's samples are taken back to back, so a burst of load from another
process slows all of them together: on a shared machine a single point can
be "slower" with unchanged code.  What fails CI is therefore the *kernel*
verdict over all of its points (:mod:`.hierarchical`, :mod:`.compare`); the
point verdicts say where a change shows.  The ``noisy_flagged`` field keeps
the collector's flag (CV above :data:`benchdb.stats.NOISY_CV`) for display.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import stats

from ..stats import summarize
from ..verdicts import Verdict

DEFAULT_THRESHOLD = 0.05
"""Smallest relative change reported (5 %): smaller ones are treated as unchanged."""

DEFAULT_ALPHA = 0.01
"""Significance level of the Mann–Whitney U test; the bootstrap interval is at 1 - alpha."""

N_RESAMPLES = 2000
"""Bootstrap resamples: enough for a stable 99 % percentile interval."""

SEED = 20140101
"""Fixed bootstrap seed: the same samples always give the same interval."""

VERDICTS = (Verdict.SLOWER, Verdict.FASTER, Verdict.NOISY, Verdict.UNCHANGED)


@dataclass(frozen=True)
class PointComparison:
    """The A/B result for one point; ``ratio`` and interval are contender / baseline."""

    ratio: float
    ci_low: float
    ci_high: float
    p_value: float
    verdict: str
    noisy_flagged: bool
    n_baseline: int
    n_contender: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _median_ratio(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.median(b, axis=axis) / np.median(a, axis=axis)


def ratio_interval(
    a: Sequence[float], b: Sequence[float], confidence: float = 1 - DEFAULT_ALPHA
) -> tuple[float, float]:
    """Percentile-bootstrap interval of ``median(b) / median(a)`` at ``confidence``."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.size < 2 or y.size < 2:
        r = float(_median_ratio(x, y))
        return r, r
    res = stats.bootstrap(
        (x, y),
        _median_ratio,
        vectorized=True,
        paired=False,
        confidence_level=confidence,
        n_resamples=N_RESAMPLES,
        method="percentile",
        rng=np.random.default_rng(SEED),
    )
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def mann_whitney_p(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided Mann–Whitney U p-value; exact for small sets (1.0 if either has < 2)."""
    if len(a) < 2 or len(b) < 2:
        return 1.0
    method = "exact" if len(a) * len(b) <= 400 else "asymptotic"
    return float(stats.mannwhitneyu(a, b, alternative="two-sided", method=method).pvalue)


def compare_samples(
    a: Sequence[float],
    b: Sequence[float],
    *,
    threshold: float = DEFAULT_THRESHOLD,
    alpha: float = DEFAULT_ALPHA,
    flagged_noisy: bool = False,
) -> PointComparison:
    """Compare baseline samples ``a`` with contender samples ``b`` (module docstring rules).

    ``flagged_noisy`` marks a point the collector already flagged (reported in
    ``noisy_flagged`` with the samples' own CV check); it does not change the verdict.
    """
    if threshold <= 0:
        raise ValueError("threshold must be positive")
    sa, sb = summarize(a), summarize(b)
    ratio = sb.t_median / sa.t_median
    low, high = ratio_interval(a, b, 1 - alpha)
    p = mann_whitney_p(a, b)
    upper, lower = 1 + threshold, 1 / (1 + threshold)
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    significant = p < alpha
    if y.min() > upper * x.max() or (significant and ratio > upper):
        verdict = Verdict.SLOWER
    elif y.max() < lower * x.min() or (significant and ratio < lower):
        verdict = Verdict.FASTER
    elif high > upper or low < lower:
        verdict = Verdict.NOISY
    else:
        verdict = Verdict.UNCHANGED
    return PointComparison(
        ratio=ratio,
        ci_low=low,
        ci_high=high,
        p_value=p if math.isfinite(p) else 1.0,
        verdict=verdict,
        noisy_flagged=flagged_noisy or sa.noisy or sb.noisy,
        n_baseline=sa.n,
        n_contender=sb.n,
    )
