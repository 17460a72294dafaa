"""A kernel's change over its points (the two-level bootstrap) on sample sets with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from benchdb.regress.compare import band_verdict
from benchdb.regress.hierarchical import kernel_change

RNG = np.random.default_rng(7)


def point(t: float, n: int = 7, cv: float = 0.02) -> list[float]:
    return list(t * (1 + cv * RNG.standard_normal(n)))


def bimodal(t: float) -> list[float]:
    """Samples of a point on a loaded 2-core VM: some at the kernel's time, some 4x slower."""
    return [t, 4 * t, t, 1.01 * t, 4.2 * t]


def test_a_uniform_slowdown_is_estimated_and_bracketed() -> None:
    pairs = [(point(t), point(1.3 * t)) for t in (1e-6, 1e-5, 1e-4, 1e-3, 1e-2)]
    c = kernel_change(pairs, 0.99)
    assert c.ratio == pytest.approx(1.3, rel=0.03)
    assert 1.05 < c.ci_low < 1.3 < c.ci_high
    assert band_verdict(c.ratio, c.ci_low, c.ci_high, 0.05) == "slower"
    assert c.points == 5


def test_noisy_bimodal_points_far_beyond_the_threshold_are_slower() -> None:
    # NUMBA_OPT=0 on a loaded VM: every point 20-80x slower, samples 4x apart within a point.
    times, factors = [1e-6, 1e-5, 1e-4, 1e-3], [20, 80, 35, 24]
    pairs = [(bimodal(t), bimodal(k * t)) for t, k in zip(times, factors, strict=True)]
    c = kernel_change(pairs, 0.99)
    assert c.ci_low >= 20 / 4.2 - 1e-9  # at worst the slow mode of a against the fast of b
    assert band_verdict(c.ratio, c.ci_low, c.ci_high, 0.05) == "slower"


def test_one_point_spoiled_by_a_burst_does_not_make_the_kernel_slower() -> None:
    times = [1e-6, 3e-6, 1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2]
    pairs = [(point(t), point(t)) for t in times]
    pairs[4] = (pairs[4][0], point(4 * times[4]))  # every sample of one point 4x: a burst
    c = kernel_change(pairs, 0.99)
    assert c.ratio == pytest.approx(1.0, abs=0.03)
    assert band_verdict(c.ratio, c.ci_low, c.ci_high, 0.05) != "slower"


def test_unchanged_quiet_points_are_unchanged() -> None:
    pairs = [(point(t, cv=0.005), point(t, cv=0.005)) for t in (1e-6, 1e-5, 1e-4, 1e-3)]
    c = kernel_change(pairs, 0.99)
    assert band_verdict(c.ratio, c.ci_low, c.ci_high, 0.05) == "unchanged"


def test_the_interval_is_deterministic_and_one_point_works() -> None:
    pairs = [(point(1e-3), point(1.5e-3))]
    first, second = kernel_change(pairs, 0.99), kernel_change(pairs, 0.99)
    assert first == second
    assert first.ci_low <= first.ratio <= first.ci_high


def test_no_points_is_an_error() -> None:
    with pytest.raises(ValueError):
        kernel_change([], 0.99)


@pytest.mark.parametrize(
    ("ratio", "low", "high", "verdict"),
    [
        (1.20, 1.01, 1.40, "slower"),  # significant and beyond the threshold
        (1.03, 1.01, 1.08, "noisy"),  # significant, but not shown to exceed 5 %
        (1.20, 0.90, 1.50, "noisy"),  # beyond the threshold, but not significant
        (1.00, 0.96, 1.04, "unchanged"),
        (0.80, 0.70, 0.95, "faster"),
    ],
)
def test_band_verdicts(ratio: float, low: float, high: float, verdict: str) -> None:
    assert band_verdict(ratio, low, high, 0.05) == verdict
