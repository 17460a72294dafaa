"""Change-point detectors on synthetic series with known steps."""

from __future__ import annotations

import numpy as np
import pytest

from benchdb.errors import UserError
from benchdb.regress.detectors import DETECTORS, get_detector
from benchdb.regress.detectors.potts import fit_segments


def noisy(levels: list[tuple[float, int]], sd: float = 0.01, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    y = np.concatenate([np.full(n, v) for v, n in levels])
    return y * (1 + sd * rng.standard_normal(y.size))


@pytest.mark.parametrize("name", DETECTORS.names())
def test_finds_an_injected_step_at_its_run(name: str) -> None:
    y = noisy([(1.0, 12), (1.15, 8)])
    steps = get_detector(name).detect(y)
    assert [s.index for s in steps] == [12]
    assert steps[0].direction == "slower"
    assert steps[0].change == pytest.approx(0.15, abs=0.03)


@pytest.mark.parametrize("name", DETECTORS.names())
def test_finds_two_steps_up_and_down(name: str) -> None:
    y = noisy([(1.0, 10), (1.3, 10), (0.9, 10)], seed=1)
    steps = get_detector(name).detect(y)
    assert [(s.index, s.direction) for s in steps] == [(10, "slower"), (20, "faster")]


@pytest.mark.parametrize("name", DETECTORS.names())
@pytest.mark.parametrize("seed", range(5))
def test_flat_noise_has_no_step(name: str, seed: int) -> None:
    assert get_detector(name).detect(noisy([(1.0, 30)], sd=0.02, seed=seed)) == []


@pytest.mark.parametrize("name", DETECTORS.names())
def test_steps_below_min_change_are_not_reported(name: str) -> None:
    y = noisy([(1.0, 15), (1.03, 15)], sd=0.001)
    assert get_detector(name).detect(y) == []
    assert [s.index for s in get_detector(name, min_change=0.01).detect(y)] == [15]


def test_potts_ignores_a_single_outlier_run_but_zscore_reports_it() -> None:
    y = noisy([(1.0, 20)], sd=0.005)
    y[9] = 1.5
    assert get_detector("potts").detect(y) == []
    assert [(s.index, s.direction) for s in get_detector("zscore").detect(y)] == [
        (9, "slower"),
        (10, "faster"),
    ]


def test_zscore_judges_the_newest_run_alone() -> None:
    y = noisy([(1.0, 10), (1.2, 1)], sd=0.005)
    assert [s.index for s in get_detector("zscore").detect(y)] == [10]
    assert get_detector("potts").detect(y) == []  # a level must hold for two runs


def test_potts_segments_cover_the_series_with_their_medians() -> None:
    y = [1.0, 1.0, 1.0, 2.0, 2.0, 2.0]
    assert fit_segments(y) == [(0, 3, 1.0), (3, 6, 2.0)]


def test_short_and_empty_series() -> None:
    for name in DETECTORS.names():
        assert get_detector(name).detect([]) == []
        assert get_detector(name).detect([1.0]) == []
        assert get_detector(name).detect([1.0, 2.0]) == []


def test_unknown_detector_names_the_choices() -> None:
    with pytest.raises(UserError, match="potts, zscore"):
        get_detector("cusum")
