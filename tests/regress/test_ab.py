"""The A/B statistics on synthetic sample sets whose answers are known."""

from __future__ import annotations

import numpy as np
import pytest

from benchdb.regress.ab import compare_samples, mann_whitney_p, ratio_interval

BASE = [1.000, 1.004, 0.998, 1.002, 1.001]  # seconds; CV ~0.2 %


def test_full_separation_has_the_exact_mann_whitney_p() -> None:
    # 5 v 5 with no overlap: the two-sided exact p-value is 2 / C(10, 5) = 2/252.
    assert mann_whitney_p(BASE, [x * 1.1 for x in BASE]) == pytest.approx(2 / 252)
    assert mann_whitney_p(BASE, BASE) == pytest.approx(1.0)


def test_ten_percent_slower_is_slower_with_the_ratio_inside_its_interval() -> None:
    r = compare_samples(BASE, [x * 1.10 for x in BASE])
    assert r.verdict == "slower"
    assert r.ratio == pytest.approx(1.10)
    assert r.ci_low <= 1.10 <= r.ci_high
    assert r.ci_low > 1.05


def test_ten_percent_faster_is_faster() -> None:
    assert compare_samples(BASE, [x / 1.10 for x in BASE]).verdict == "faster"


def test_significant_but_small_change_is_unchanged() -> None:
    # 2 % slower, cleanly separated (p = 2/252) but below the 5 % threshold.
    r = compare_samples(BASE, [x * 1.02 for x in BASE])
    assert r.p_value < 0.01
    assert r.verdict == "unchanged"
    assert r.ci_high < 1.05


def test_threshold_is_configurable() -> None:
    slower = [x * 1.02 for x in BASE]
    assert compare_samples(BASE, slower, threshold=0.01).verdict == "slower"


def test_overlapping_wide_samples_are_noisy_not_slower() -> None:
    a = [1.0, 1.3, 0.8, 1.1, 0.9]
    b = [1.2, 0.85, 1.35, 1.05, 0.95]
    r = compare_samples(a, b)
    assert r.verdict == "noisy"
    assert r.p_value > 0.05


def test_separated_samples_are_slower_however_noisy_and_few() -> None:
    # CV ~30 % on both sides and 3 samples each (the exact Mann-Whitney p cannot go below
    # 0.1), but every contender sample is far beyond every baseline sample: slower.
    a = [1.0, 1.5, 0.7]
    b = [20.0, 35.0, 25.0]
    r = compare_samples(a, b, flagged_noisy=True)
    assert r.p_value > 0.05 and r.noisy_flagged
    assert r.verdict == "slower"
    assert compare_samples(b, a, flagged_noisy=True).verdict == "faster"


def test_separation_within_the_threshold_is_not_a_change() -> None:
    a = [1.00, 1.01, 1.005]
    b = [1.03, 1.04, 1.035]  # separated, but by less than 5 %
    assert compare_samples(a, b).verdict in ("unchanged", "noisy")


def test_the_noisy_flag_does_not_decide_the_verdict() -> None:
    a = [1.0, 1.01, 0.99, 1.02, 0.98]
    b = [1.06, 1.12, 1.10, 1.16, 1.08]
    clean, flagged = compare_samples(a, b), compare_samples(a, b, flagged_noisy=True)
    assert clean.verdict == flagged.verdict == "slower"
    assert flagged.noisy_flagged and not clean.noisy_flagged


def test_high_cv_samples_are_flagged_by_the_shared_summary() -> None:
    a = [1.0, 1.5, 0.7, 1.2, 0.8]  # CV > 10 %
    assert compare_samples(a, a).noisy_flagged


def test_interval_is_deterministic_and_brackets_the_ratio() -> None:
    rng = np.random.default_rng(3)
    a = 1 + 0.02 * rng.standard_normal(9)
    b = 1.3 * (1 + 0.02 * rng.standard_normal(9))
    first, second = ratio_interval(a, b), ratio_interval(a, b)
    assert first == second
    ratio = np.median(b) / np.median(a)
    assert first[0] < ratio < first[1]


def test_bad_threshold_is_rejected() -> None:
    with pytest.raises(ValueError):
        compare_samples(BASE, BASE, threshold=0)
