"""The row-length correction: rectangles beside the square curve (benchdb.predict.aspect)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchdb.predict import aspect, predict
from benchdb.predict.basis import rate_basis
from benchdb.predict.validate import validate

from .synth import add_run, square_sizes, step_curve

SQUARES = square_sizes(8, 1500, 20)
# stencil2d5 is C-ordered: its rows run along the last axis.
SHORT_ROWS = [(2 * n, n // 2) for n in (40, 160, 640)]
LONG_ROWS = [(n // 2, 2 * n) for n in (40, 160, 640)]
SLOW, FAST = 0.8, 1.1


def test_log_aspect_follows_the_contiguous_axis() -> None:
    shallow = rate_basis("shallow.cu").geometry  # Fortran order: rows along axis 0
    stencil = rate_basis("stencil2d5").geometry
    shapes = np.array([[100, 100], [200, 50]])
    assert aspect.log_aspect(shallow, shapes) == pytest.approx([0, math.log(2)])
    assert aspect.log_aspect(stencil, shapes) == pytest.approx([0, -math.log(2)])
    assert aspect.log_aspect(rate_basis("stream.copy").geometry, np.array([[10]])) == [0]


def test_slopes_interpolate_in_footprint_and_clamp_in_aspect() -> None:
    a = np.log(2)
    params = aspect.fit(np.array([1.0, 3.0, 1.0]), np.array([-a, -a, a]), np.log([0.8, 0.9, 1.2]))
    factor, beyond = aspect.evaluate(
        params, np.array([1.0, 2.0, 9.0, 1.0, 1.0, 1.0]), np.array([-a, -a, -a, -a / 2, 2 * a, 0])
    )
    mid = math.exp((math.log(0.8) + math.log(0.9)) / 2)
    assert factor == pytest.approx([0.8, mid, 0.9, math.sqrt(0.8), 1.2, 1.0])
    assert list(beyond) == [False, False, False, False, True, False]


def test_calibration_rectangles_correct_other_rectangles(sdb) -> None:
    curve = step_curve()
    add_run(
        sdb,
        "stencil2d5",
        [*SQUARES, *SHORT_ROWS, *LONG_ROWS],
        curve,
        scale_at={**dict.fromkeys(SHORT_ROWS, SLOW), **dict.fromkeys(LONG_ROWS, FAST)},
    )
    basis = rate_basis("stencil2d5")
    for method in ("linear", "pchip"):
        own = predict(sdb, "stencil2d5", SHORT_ROWS, method=method)
        _, fp = basis.points_and_footprint(np.array(SHORT_ROWS))
        # exact up to the square fit at the rectangles' footprints
        assert own.rate.to_numpy() == pytest.approx(SLOW * curve(fp), rel=0.03)
        # Rows 1.41x shorter than a square's: half the log aspect, sqrt of the factor.
        query = [(283, 141), (141, 283), (200, 200)]
        df = predict(sdb, "stencil2d5", query, method=method)
        square = predict(sdb, "stencil2d5", [(200, 200)], method=method).rate[0]
        assert df.rate[0] / square == pytest.approx(math.sqrt(SLOW), rel=0.02)
        assert df.rate[1] / square == pytest.approx(math.sqrt(FAST), rel=0.02)
        assert df.rate[2] == square
        assert not df.aspect_extrapolated.any()
    beyond = predict(sdb, "stencil2d5", [(800, 50)], method="linear")
    assert beyond.aspect_extrapolated[0]


def test_levels_of_aspect_interpolate_between_them_and_hold_beyond() -> None:
    # short rows slow a loop more and more steeply: 2x shorter 0.9, 8x shorter 0.5
    a2, a8 = np.log(2), np.log(8)
    u = np.arange(4.0)
    params = aspect.fit(
        np.concatenate([u, u]),
        np.r_[np.full(4, -a2), np.full(4, -a8)],
        np.log(np.r_[[0.9] * 4, [0.5] * 4]),
    )
    assert [lv["a"] for lv in params["short"]] == pytest.approx([a2, a8])
    query = np.array([-a2, -np.log(4), -a8, -np.log(16), -a2 / 2])
    factor, beyond = aspect.evaluate(params, np.full(5, 1.5), query)
    halfway = math.exp((math.log(0.9) + math.log(0.5)) / 2)  # 4x is halfway in log aspect
    assert factor == pytest.approx([0.9, halfway, 0.5, 0.5, math.sqrt(0.9)])
    assert list(beyond) == [False, False, False, True, False]
    # the former single slope, from the 2x rectangles alone, holds 0.9 at 4x and says so
    one = aspect.evaluate(
        aspect.fit(u, np.full(4, -a2), np.log([0.9] * 4)), np.array([1.5]), query[1:2]
    )
    assert one[0][0] == pytest.approx(0.9) and one[1][0]


def test_a_level_answers_only_near_the_footprints_it_was_measured_at() -> None:
    a2, a8 = np.log(2), np.log(8)
    u = np.arange(0.0, 8.0)
    # 2x rectangles everywhere; 8x ones at the small footprints only
    params = aspect.fit(
        np.r_[u, u[:3]],
        np.r_[np.full(8, -a2), np.full(3, -a8)],
        np.log(np.r_[[0.9] * 8, [0.5] * 3]),
    )
    factor, beyond = aspect.evaluate(params, np.array([1.0, 7.0]), np.full(2, -a8))
    assert factor[0] == pytest.approx(0.5) and not beyond[0]
    assert factor[1] == pytest.approx(0.9) and beyond[1]  # held at the 2x level there


def test_one_disturbed_rectangle_does_not_bend_the_correction() -> None:
    a = np.log(2)
    u = np.arange(5.0)
    ratio = np.log([0.9, 0.9, 0.3, 0.9, 0.9])  # the middle one had a bad spell
    params = aspect.fit(u, np.full(5, -a), ratio)
    factor, _ = aspect.evaluate(params, np.array([2.0]), np.array([-a]))
    assert factor[0] == pytest.approx(0.9)


def test_two_near_rectangles_carry_the_correction_between_them() -> None:
    # `app calibrate --near` adds rectangles with the block's own rows at +-9 % footprint
    # between the sweep's 4:1 ones, whose much shorter rows ran 40 % slower; a 2:1 block
    # of the near rows runs like the square.  The pair must survive the median filter.
    u = np.log([181e3, 243e3, 288e3, 371e3])
    a = np.array([-np.log(2), -0.30, -0.38, -np.log(2)])  # 20x82, 35x64, 35x76, 29x118
    ratio = np.log([1 / 1.4, 1.0, 1.0, 1 / 1.4])
    factor, _ = aspect.evaluate(aspect.fit(u, a, ratio), np.log([266e3]), np.array([-0.35]))
    assert factor[0] == pytest.approx(1.0)


def test_a_kernel_measured_in_squares_says_its_rectangles_are_extrapolated(sdb) -> None:
    add_run(sdb, "stencil2d5", SQUARES, step_curve())
    df = predict(sdb, "stencil2d5", [(400, 100), (200, 200)], method="linear")
    assert list(df.aspect_extrapolated) == [True, False]
    _, fp = rate_basis("stencil2d5").points_and_footprint(np.array([(400, 100)]))
    assert df.rate[0] == pytest.approx(step_curve()(fp)[0], rel=0.03)  # uncorrected


def test_validation_checks_rectangles_with_the_correction(sdb) -> None:
    curve = step_curve()
    scale = {**dict.fromkeys(SHORT_ROWS, SLOW), **dict.fromkeys(LONG_ROWS, FAST)}
    add_run(sdb, "stencil2d5", [*SQUARES, *SHORT_ROWS, *LONG_ROWS], curve, scale_at=scale)
    checks = [(240, 60), (60, 240)]  # the fitted aspect at footprints between the rectangles
    add_run(
        sdb,
        "stencil2d5",
        checks,
        curve,
        tags=["validation"],
        scale_at={checks[0]: SLOW, checks[1]: FAST},
    )
    report = validate(sdb, kernels=["stencil2d5"], methods=["pchip"])
    errors = [p["error_pct"] for p in report["check_points"]]
    assert len(errors) == 2
    assert max(abs(e) for e in errors) < 2.0
