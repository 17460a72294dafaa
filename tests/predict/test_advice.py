"""Padding advice (:mod:`benchdb.predict.advice`) on synthetic curves with a planted dip."""

from __future__ import annotations

import numpy as np
import pytest

from benchdb.errors import UserError
from benchdb.predict.advice import advise, paddings
from benchdb.predict.basis import rate_basis
from benchdb.predict.lookup import prepare_lookup

from .synth import add_run, square_sizes, step_curve

DIP = (512, 512)
SIZES = sorted({*square_sizes(8, 1500, 16), (480, 480), DIP, (544, 544)})
SLOW = 0.6  # the dip's rate over the smooth curve's


@pytest.fixture
def lookup(sdb):
    add_run(sdb, "stencil2d5", SIZES, step_curve(), scale_at={DIP: SLOW})
    return prepare_lookup(sdb, "stencil2d5", method="pchip")


def true_time(shapes: list[tuple[int, ...]]) -> np.ndarray:
    """The smooth curve's time at ``shapes``: what a lookup without the dip must predict."""
    basis = rate_basis("stencil2d5")
    points, fp = basis.points_and_footprint(np.array(shapes))
    return basis.work_per_point * points / step_curve()(fp)


def test_a_planted_dip_is_found_and_the_candidates_avoid_it(lookup) -> None:
    advice = advise(lookup, DIP, pad=8, top=5)
    assert advice.near_dip and advice.dips == ("512x512",)
    assert "dip" in advice.query.flags
    # S is predicted with its dip: the measured slow time, not the smooth curve's
    assert advice.query.time_s == pytest.approx(true_time([DIP])[0] / SLOW, rel=1e-6)
    assert advice.considered == 9 * 9 - 1 and advice.faster == advice.considered
    assert len(advice.candidates) == 5
    for c in advice.candidates:
        assert c.key != "512x512" and "dip" not in c.flags
        assert c.time_s < advice.query.time_s and c.ratio == pytest.approx(
            c.time_s / advice.query.time_s
        )
        assert tuple(np.subtract(c.shape, DIP)) == c.padding
    # predicted from the curve without the dip: the smooth curve's time, within interpolation
    times = np.array([c.time_s for c in advice.candidates])
    truth = true_time([c.shape for c in advice.candidates])
    assert np.all(np.abs(times / truth - 1) < 0.03)
    # least padding first, then fastest
    keys = [(sum(c.padding), c.time_s) for c in advice.candidates]
    assert keys == sorted(keys) and sum(advice.candidates[0].padding) == 1


def test_a_shape_between_a_dip_and_its_neighbour_is_advised_but_never_the_dip(lookup) -> None:
    advice = advise(lookup, (500, 500), pad=16, top=500)
    assert advice.dips == ("512x512",)
    # 512x512 is one of the 17 x 17 - 1 paddings, and left out
    assert advice.considered == 17 * 17 - 2
    assert all(c.key != "512x512" for c in advice.candidates)
    assert len(advice.candidates) == advice.faster > 0


def test_a_shape_far_from_any_dip_gets_no_candidates(lookup) -> None:
    advice = advise(lookup, (100, 100), pad=8, top=5)
    assert not advice.near_dip
    assert advice.dips == () and advice.candidates == () and advice.considered == 0
    assert advice.query.time_s > 0


def test_a_spike_is_no_dip(sdb) -> None:
    add_run(sdb, "stencil2d5", SIZES, step_curve(), scale_at={DIP: 1.5})
    lookup = prepare_lookup(sdb, "stencil2d5", method="pchip")
    advice = advise(lookup, DIP)
    assert "spike" in advice.query.flags and not advice.near_dip and advice.candidates == ()


@pytest.mark.parametrize(("pad", "top"), [(0, 5), (8, 0)])
def test_pad_and_top_below_one_are_refused(lookup, pad: int, top: int) -> None:
    with pytest.raises(UserError, match="at least 1"):
        advise(lookup, DIP, pad=pad, top=top)


def test_paddings_cover_the_grid_but_zero() -> None:
    grid = paddings(3, 2)
    assert grid.shape == (26, 3) and grid.any(axis=1).all() and grid.max() == 2
    assert len({tuple(p) for p in grid}) == 26
