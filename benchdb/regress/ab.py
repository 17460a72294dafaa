"""A/B statistics for one measured point: did the contender get slower?

docs/design.md "Regression tracking": the ratio of medians with a significance
test *and* a minimum effect size.  For a point measured in a baseline run
(samples ``a``, seconds per repetition) and in a contender run (samples
``b``):

* **ratio** ``r = median(b) / median(a)``: above 1 the contender is slower.
* **confidence interval** of ``r`` at level ``1 - alpha``: a percentile
  bootstrap over the stored samples (:data:`N_RESAMPLES` resamples, a fixed
  seed so the same data always give the same interval): the interval of
  :func:`scipy.stats.bootstrap` with ``method="percentile"``, computed here
  from the same resamples in the same arithmetic.
* **p-value**: the two-sided Mann–Whitney U test of the two sample sets,
  exact for the small sample counts the collectors store: the p-value of
  :func:`scipy.stats.mannwhitneyu` (``method="exact"`` up to
  :data:`EXACT_U_LIMIT` pairs of samples, else ``"asymptotic"`` with its tie
  and continuity corrections), computed here in the same arithmetic.  It makes no
  assumption of normality, which timing
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

``compare`` judges every point two runs share (200 in a sweep), so the points are
judged together (:func:`compare_batch`): the statistics are per point, but points of
equal sample counts go through numpy as one array.  The seed is fixed, so every
point of the same sample counts draws the same resample indices: they are drawn
once.  scipy.stats is not used: per point its wrappers cost about 10 ms, and
importing it about a second, more than all the rest of ``compare``
(docs/findings/ab-comparison.md, "At a year of history"); only scipy.special's
``binom`` and ``ndtr`` are, so that the p-values are scipy's to the last bit.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from functools import cache
from typing import Any

import numpy as np

from ..stats import SampleStats, quantiles, summarize
from ..verdicts import Verdict

DEFAULT_THRESHOLD = 0.05
"""Smallest relative change reported (5 %): smaller ones are treated as unchanged."""

DEFAULT_ALPHA = 0.01
"""Significance level of the Mann–Whitney U test; the bootstrap interval is at 1 - alpha."""

N_RESAMPLES = 2000
"""Bootstrap resamples: enough for a stable 99 % percentile interval."""

SEED = 20140101
"""Fixed bootstrap seed: the same samples always give the same interval."""

EXACT_U_LIMIT = 400
"""Largest product of the two sample counts for which the U test's p-value is exact."""

BATCH_VALUES = 1 << 22
"""Resampled values held at once (32 MiB of float64) when points are bootstrapped together."""

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


@cache
def _resample_counts(nx: int, ny: int) -> tuple[np.ndarray, np.ndarray]:
    """How often each of ``nx`` (and ``ny``) values is drawn in each resample, shape
    ``(n, N_RESAMPLES)``, from the indices :func:`scipy.stats.bootstrap` draws for two
    unpaired samples: one generator seeded with :data:`SEED`, the first sample's
    ``(N_RESAMPLES, nx)`` indices, then the second's.  They depend on the counts alone,
    so they are drawn once per pair of counts (read-only: the cache shares them)."""
    rng = np.random.default_rng(SEED)
    first = _draw_counts(rng.integers(0, nx, (N_RESAMPLES, nx)), nx)
    second = _draw_counts(rng.integers(0, ny, (N_RESAMPLES, ny)), ny)
    return first, second


def _draw_counts(indices: np.ndarray, n: int) -> np.ndarray:
    """Per resample (a row of ``indices``), how often each of the ``n`` values is drawn:
    the median of a resample depends on nothing else (:func:`_resampled_medians`)."""
    counts = np.zeros((n, len(indices)), dtype=np.int64)
    np.add.at(counts, (indices, np.arange(len(indices))[:, None]), 1)
    counts.flags.writeable = False
    return counts


def _resampled_medians(x: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Per row of ``x`` (finite samples), the medians of its resamples drawn ``counts``
    times, each as :func:`numpy.median` gives it (the middle value, or the mean of the
    middle two).

    A resample's k-th smallest value is the first of the row's sorted values at which
    the running count of its draws exceeds ``k`` (order statistics of a multiset): one
    sort per row instead of one per resample, a third of the time."""
    order = np.argsort(x, axis=-1)
    ordered = np.take_along_axis(x, order, axis=-1)
    drawn_up_to = np.cumsum(counts[order], axis=1)  # (rows, n, resamples)

    def smallest(k: int) -> np.ndarray:
        return np.take_along_axis(ordered, (drawn_up_to <= k).sum(axis=1), axis=-1)

    half = x.shape[1] // 2
    return smallest(half) if x.shape[1] % 2 else (smallest(half - 1) + smallest(half)) / 2


def _chunks(points: int, values_per_point: int) -> Iterator[slice]:
    """Slices of ``points`` rows holding at most :data:`BATCH_VALUES` values each (one row
    at least): the batched statistics stay within tens of MiB at any sample count."""
    step = max(1, BATCH_VALUES // values_per_point)
    return (slice(i, i + step) for i in range(0, points, step))


def ratio_intervals(
    x: np.ndarray, y: np.ndarray, confidence: float
) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``x`` (baseline) and ``y`` (contender), finite samples, the
    percentile-bootstrap interval of ``median(y) / median(x)`` at ``confidence``; a side
    of one sample gives the ratio.

    Each row's interval is the one :func:`scipy.stats.bootstrap` gives
    (``method="percentile"``, seeded with :data:`SEED`): the same resamples, their
    statistic, and its quantiles as :func:`scipy.stats.quantile` computes them.
    """
    (points, nx), ny = x.shape, y.shape[1]
    if nx < 2 or ny < 2:
        ratio = np.median(y, axis=-1) / np.median(x, axis=-1)
        return ratio, ratio
    cx, cy = _resample_counts(nx, ny)
    tail = (1 - confidence) / 2
    low, high = np.empty(points), np.empty(points)
    for rows in _chunks(points, N_RESAMPLES * max(nx, ny)):
        theta = _resampled_medians(y[rows], cy) / _resampled_medians(x[rows], cx)
        low[rows], high[rows] = quantiles(theta, (tail, 1 - tail)).T
    return low, high


def ratio_interval(
    a: Sequence[float], b: Sequence[float], confidence: float = 1 - DEFAULT_ALPHA
) -> tuple[float, float]:
    """Percentile-bootstrap interval of ``median(b) / median(a)`` at ``confidence``."""
    low, high = ratio_intervals(_row(a), _row(b), confidence)
    return float(low[0]), float(high[0])


def _u_statistics(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row, Mann & Whitney's (1947) ``U`` of ``x``: the pairs with ``x_i > y_j``, a tie
    counting half; and the tie term ``sum(t^3 - t)`` over the groups of ``t`` equal values
    in both samples together.  Both are exact in float64 (integers and halves), so they
    equal scipy's, which ranks the samples instead."""
    pairs_x_above = (x[:, :, None] > y[:, None, :]).sum(axis=(1, 2))
    pairs_tied = (x[:, :, None] == y[:, None, :]).sum(axis=(1, 2))
    both = np.concatenate([x, y], axis=1)
    group = (both[:, :, None] == both[:, None, :]).sum(axis=2)  # each value's tie group
    return pairs_x_above + 0.5 * pairs_tied, (group**2 - 1).sum(axis=1).astype(float)


@cache
def _exact_u_distribution(n1: int, n2: int) -> tuple[np.ndarray, np.ndarray]:
    """The null pmf and cdf of ``U`` for ``n1`` and ``n2`` samples without ties, over
    ``U = 0 .. n1*n2``.

    The number of orderings giving each ``U`` is a coefficient of the Gaussian binomial
    ``prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i)``, ``m = min(n1, n2)``, ``n = max(n1, n2)``
    (Andrews, The Theory of Partitions, 1976, ch. 3): exact integers, as scipy's counts
    are below :data:`EXACT_U_LIMIT`.  Divided by ``scipy.special.binom(n1 + n2, m)``
    and summed cumulatively, as scipy does.
    """
    from scipy.special import binom  # a tenth of scipy.stats's import

    m, n = sorted((n1, n2))
    counts = np.zeros(m * n + 1, dtype=np.int64)
    counts[0] = 1
    for i in range(1, m + 1):
        counts[n + i :] -= counts[: -(n + i)].copy()  # times (1 - q^(n+i))
        for r in range(i):  # divided by (1 - q^i): a running sum with stride i
            counts[r::i] = np.cumsum(counts[r::i])
    pmf = counts / binom(m + n, m)
    return pmf, np.cumsum(pmf)


def _exact_u_p(u: np.ndarray, n1: int, n2: int) -> np.ndarray:
    """Two-sided exact p-values of ``u = max(U1, U2)``: twice the survival function at
    ``int(u)``, by symmetry the cdf at ``n1*n2 - int(u)``, as scipy's ``_MWU.sf``."""
    pmf, cdf = _exact_u_distribution(n1, n2)
    k = u.astype(np.int64)
    kc = n1 * n2 - k
    sf = np.where(k < kc, 1.0 - cdf[k] + pmf[k], cdf[kc])
    return sf * 2


def _asymptotic_u_p(u: np.ndarray, tie_term: np.ndarray, n1: int, n2: int) -> np.ndarray:
    """Two-sided normal-approximation p-values of ``u = max(U1, U2)`` with the tie and
    continuity corrections, in the order of operations of scipy's ``_get_mwu_z``."""
    from scipy.special import ndtr  # a tenth of scipy.stats's import

    n = n1 + n2
    s = np.sqrt(n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1))))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (u - n1 * n2 / 2 - 0.5) / s
    return ndtr(-z) * 2


def mann_whitney_ps(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per row of ``x`` and ``y``, the two-sided Mann–Whitney U p-value; exact when the
    product of the counts is at most :data:`EXACT_U_LIMIT` (1.0 if either has < 2).

    Each row's p-value is the one :func:`scipy.stats.mannwhitneyu` gives with that
    ``method`` (and its default continuity correction)."""
    (points, n1), n2 = x.shape, y.shape[1]
    if n1 < 2 or n2 < 2:
        return np.ones(points)
    p = np.empty(points)
    for rows in _chunks(points, (n1 + n2) ** 2):
        u1, tie_term = _u_statistics(x[rows], y[rows])
        u = np.maximum(u1, n1 * n2 - u1)
        exact = n1 * n2 <= EXACT_U_LIMIT
        p[rows] = _exact_u_p(u, n1, n2) if exact else _asymptotic_u_p(u, tie_term, n1, n2)
    return np.clip(p, 0.0, 1.0)


def mann_whitney_p(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided Mann–Whitney U p-value; exact for small sets (1.0 if either has < 2)."""
    return float(mann_whitney_ps(_row(a), _row(b))[0])


def _row(samples: Sequence[float]) -> np.ndarray:
    """One point's samples as the one row the batched functions take."""
    return np.asarray(samples, dtype=float).reshape(1, -1)


def _point_statistics(
    x: Sequence[np.ndarray], y: Sequence[np.ndarray], confidence: float
) -> np.ndarray:
    """Per point, the interval's low and high ends and the p-value (one row each): the
    points of equal sample counts are stacked and go through numpy together."""
    groups: dict[tuple[int, int], list[int]] = {}
    for i, (a, b) in enumerate(zip(x, y, strict=True)):
        groups.setdefault((a.size, b.size), []).append(i)
    out = np.empty((len(x), 3))
    for rows in groups.values():
        bx, by = np.stack([x[i] for i in rows]), np.stack([y[i] for i in rows])
        low, high = ratio_intervals(bx, by, confidence)
        out[rows] = np.column_stack([low, high, mann_whitney_ps(bx, by)])
    return out


def _verdict(
    x: np.ndarray,
    y: np.ndarray,
    ratio: float,
    low: float,
    high: float,
    p: float,
    *,
    threshold: float,
    alpha: float,
) -> Verdict:
    """A point's verdict by the module docstring's rules."""
    upper, lower = 1 + threshold, 1 / (1 + threshold)
    significant = p < alpha
    if y.min() > upper * x.max() or (significant and ratio > upper):
        return Verdict.SLOWER
    if y.max() < lower * x.min() or (significant and ratio < lower):
        return Verdict.FASTER
    if high > upper or low < lower:
        return Verdict.NOISY
    return Verdict.UNCHANGED


def compare_batch(
    pairs: Sequence[tuple[Sequence[float], Sequence[float]]],
    thresholds: Sequence[float],
    flagged: Sequence[bool],
    *,
    alpha: float = DEFAULT_ALPHA,
) -> list[PointComparison]:
    """:func:`compare_samples` of every (baseline, contender) pair of samples, each with
    its own threshold and collector's flag; the same results, the points computed together.
    """
    if any(t <= 0 for t in thresholds):
        raise ValueError("threshold must be positive")
    x = [np.asarray(a, dtype=float) for a, _ in pairs]
    y = [np.asarray(b, dtype=float) for _, b in pairs]
    # first: an empty or non-finite sample set fails here, as one point alone does
    summaries = [(summarize(a), summarize(b)) for a, b in zip(x, y, strict=True)]
    statistics = _point_statistics(x, y, 1 - alpha)
    return [
        _comparison(a, b, sa, sb, tuple(map(float, row)), threshold=t, alpha=alpha, flag=f)
        for a, b, (sa, sb), row, t, f in zip(
            x, y, summaries, statistics, thresholds, flagged, strict=True
        )
    ]


def _comparison(
    x: np.ndarray,
    y: np.ndarray,
    sa: SampleStats,
    sb: SampleStats,
    statistics: tuple[float, ...],
    *,
    threshold: float,
    alpha: float,
    flag: bool,
) -> PointComparison:
    """One point's result from its samples, their summaries and its (low, high, p)."""
    low, high, p = statistics
    ratio = sb.t_median / sa.t_median
    return PointComparison(
        ratio=ratio,
        ci_low=low,
        ci_high=high,
        p_value=p if math.isfinite(p) else 1.0,
        verdict=_verdict(x, y, ratio, low, high, p, threshold=threshold, alpha=alpha),
        noisy_flagged=flag or sa.noisy or sb.noisy,
        n_baseline=sa.n,
        n_contender=sb.n,
    )


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
    return compare_batch([(a, b)], [threshold], [flagged_noisy], alpha=alpha)[0]
