"""The A/B judging rule on known paired ratios (no measuring)."""

from __future__ import annotations

import numpy as np

from benchdb.regress.paired import PairedPoint, judge


def _point(shape: str, ratios: list[list[float]], lost: float = 0.0) -> PairedPoint:
    """A point whose trials have the given pair ratios (base samples all 1 ms)."""
    change = [r * 1e-3 for trial in ratios for r in trial]
    return PairedPoint(
        "k", 1, "float64", "isolated", shape, 1024, tuple([1e-3] * len(change)), tuple(change),
        tuple(len(t) for t in ratios), disturbed=lost > 0, lost=lost,
    )  # fmt: skip


def _verdict(factor: float, spread: float = 0.005, lost: float = 0.0) -> str:
    rng = np.random.default_rng(1)
    points = [
        _point(
            f"{n}", [list(factor * (1 + spread * rng.standard_normal(5))) for _ in range(3)], lost
        )
        for n in (1, 2, 3)
    ]
    (kernel,) = judge(points)
    return kernel.verdict


def test_clean_pairs() -> None:
    assert _verdict(1.0) == "unchanged"
    assert _verdict(1.06) == "slower"
    assert _verdict(1 / 1.06) == "faster"
    assert _verdict(1.02, spread=0.05) == "noisy"


def test_pairs_with_no_clean_one_count_only_for_a_change_beyond_their_lost_time() -> None:
    assert _verdict(50.0, lost=0.6) == "slower"
    assert _verdict(1.06, lost=0.05) == "disturbed"
    assert _verdict(1.0, lost=0.05) == "disturbed"


def test_one_trial_is_no_interval() -> None:
    (kernel,) = judge([_point("1", [[1.5] * 5])])
    assert kernel.verdict == "disturbed"


def _kernel(point_factors: list[float], spread: float = 0.005) -> str:
    """The verdict over one point per factor, each with 3 trials of 5 pairs."""
    rng = np.random.default_rng(2)
    points = [
        _point(f"{i}", [list(f * (1 + spread * rng.standard_normal(5))) for _ in range(3)])
        for i, f in enumerate(point_factors)
    ]
    (kernel,) = judge(points)
    return kernel.verdict


def test_points_that_disagree_are_not_enough_to_call_a_kernel_slower() -> None:
    """Where a pair of worker processes put its code and data can move a point by 8 %
    in all of that pair's trials (docs/findings/ab-comparison.md): two points 6-7 %
    slower and one unchanged, each with tight trials, do not make the kernel slower."""
    assert _kernel([1.06, 0.99, 1.07]) == "noisy"


def test_one_point_off_does_not_move_a_kernel() -> None:
    """One size whose pairs read 15 % slower (where its arrays landed) against two that
    did not change: the median over points keeps the kernel unchanged."""
    assert _kernel([1.0, 1.15, 0.995]) in ("unchanged", "noisy")
    assert _kernel([1.0, 1.15, 0.995]) != "slower"


def test_one_clean_point_among_disturbed_ones_does_not_decide() -> None:
    """An unchanged kernel whose only clean point read 5 % slower in all three trials
    (where one process put its code and data) and whose other points ran disturbed
    at no change: judged from all three, beyond their lost time, it is not slower."""
    rng = np.random.default_rng(3)
    trials = [
        [list(f * (1 + 0.005 * rng.standard_normal(5))) for _ in range(3)]
        for f in (1.05, 1.0, 0.995)
    ]
    points = [
        _point("1", trials[0]),
        _point("2", trials[1], lost=0.04),
        _point("3", trials[2], lost=0.04),
    ]
    (kernel,) = judge(points)
    assert kernel.verdict == "disturbed" and kernel.points == 3
    (alone,) = judge(points[:1])
    assert alone.verdict == "slower"  # the same point measured alone is judged
