"""The point statistics in numpy give scipy.stats's numbers to the last bit.

``benchdb.regress.ab`` and ``benchdb.stats`` compute without scipy.stats what they
once asked of it (docs/findings/ab-comparison.md, "At a year of history"); every
comparison stored or printed before must come out the same, so the two are compared
here with ``==``, not ``approx``, over sample counts, ties and both U-test methods.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy
from scipy import stats

from benchdb.regress.ab import (
    EXACT_U_LIMIT,
    N_RESAMPLES,
    SEED,
    compare_batch,
    compare_samples,
    mann_whitney_ps,
    ratio_intervals,
)
from benchdb.stats import summarize

OLD_SCIPY = tuple(int(v) for v in scipy.__version__.split(".")[:2]) < (1, 16)
"""scipy before 1.16 (the lowest versions pyproject.toml allows) rounds its own formulas
differently in the last bits: its CV divides ``std(ddof=1)`` by the mean where later ones,
as benchdb does, scale ``std(ddof=0)`` by sqrt(n/(n-1)), and its IQR interpolates through
numpy 1.x's percentile.  The stored figures come from the newer formulas."""

COUNTS = [(5, 5), (3, 5), (2, 7), (9, 4), (20, 20), (21, 21), (31, 12)]


def _rows(rng: np.random.Generator, points: int, n: int, decimals: int | None) -> np.ndarray:
    x = rng.lognormal(0.0, 0.08, (points, n)) * 1e-6
    return np.round(x, decimals + 6) if decimals is not None else x


@pytest.mark.parametrize(("n1", "n2"), COUNTS)
@pytest.mark.parametrize("decimals", [None, 2])  # continuous, or rounded into ties
def test_u_test_p_values_are_scipys(n1: int, n2: int, decimals: int | None) -> None:
    rng = np.random.default_rng(n1 * 100 + n2)
    x, y = _rows(rng, 40, n1, decimals), _rows(rng, 40, n2, decimals) * 1.03
    method = "exact" if n1 * n2 <= EXACT_U_LIMIT else "asymptotic"
    expected = [
        stats.mannwhitneyu(a, b, alternative="two-sided", method=method).pvalue
        for a, b in zip(x, y, strict=True)
    ]
    assert mann_whitney_ps(x, y).tolist() == expected


@pytest.mark.parametrize(("n1", "n2"), COUNTS[:4])
def test_bootstrap_intervals_are_scipys(n1: int, n2: int) -> None:
    rng = np.random.default_rng(n1 * 100 + n2)
    x, y = _rows(rng, 10, n1, None), _rows(rng, 10, n2, 2)
    low, high = ratio_intervals(x, y, 0.99)
    for i, (a, b) in enumerate(zip(x, y, strict=True)):
        res = stats.bootstrap(
            (a, b),
            lambda u, v, axis: np.median(v, axis=axis) / np.median(u, axis=axis),
            vectorized=True,
            confidence_level=0.99,
            n_resamples=N_RESAMPLES,
            method="percentile",
            rng=np.random.default_rng(SEED),
        )
        assert (low[i], high[i]) == tuple(res.confidence_interval)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 31])
def test_summary_spread_is_scipys(n: int) -> None:
    for x in _rows(np.random.default_rng(n), 20, n, None):
        s = summarize(x)
        got, expected = (
            (s.t_iqr, s.t_cv),
            (stats.iqr(x), stats.variation(x, ddof=1) if n > 1 else 0.0),
        )
        if OLD_SCIPY:  # an IQR is a difference: its last bits are the samples' (abs=)
            eps = 8 * np.finfo(float).eps
            assert got == pytest.approx(expected, rel=eps, abs=eps * float(np.max(x)))
        else:
            assert got == expected


def test_a_batch_gives_each_points_own_comparison() -> None:
    rng = np.random.default_rng(3)
    pairs = [
        (_rows(rng, 1, na, 2)[0].tolist(), _rows(rng, 1, nb, None)[0].tolist())
        for na, nb in [(5, 5), (3, 5), (5, 5), (1, 4), (21, 21), (5, 5)]
    ]
    thresholds, flags = [0.05, 0.1, 0.02, 0.05, 0.05, 0.5], [False, True] * 3
    batch = compare_batch(pairs, thresholds, flags)
    alone = [
        compare_samples(a, b, threshold=t, flagged_noisy=f)
        for (a, b), t, f in zip(pairs, thresholds, flags, strict=True)
    ]
    assert batch == alone
