"""The interpolation methods on synthetic curves with known answers."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.interpolate import PchipInterpolator

from benchdb.errors import UserError
from benchdb.predict.methods import METHODS

U = np.log(np.geomspace(1e3, 1e8, 30))


def eq10(u: np.ndarray, u1: float, u2: float, y1: float, y2: float, a: float) -> np.ndarray:
    """Paper 003 eq. 10 with breakpoints (u1, y1), (u2, y2) and rising slope a."""
    return np.where(
        u <= u1, y1 + a * (u - u1), np.where(u <= u2, y1 + (y2 - y1) * (u - u1) / (u2 - u1), y2)
    )


@pytest.mark.parametrize("name", METHODS.names())
def test_every_method_reproduces_a_flat_curve_and_holds_outside(name: str) -> None:
    m = METHODS.get(name)
    y = np.full_like(U, 3e9)
    params = m.fit(U, y)
    q = np.array([U[0] - 2, U[5] + 0.1, U[-1] + 3])
    np.testing.assert_allclose(m.evaluate(params, q), 3e9, rtol=1e-9)


def test_linear_is_exact_at_points_and_straight_in_log_x_between() -> None:
    y = np.linspace(5e9, 1e9, len(U)) ** 1.3
    p = METHODS.get("linear").fit(U, y)
    np.testing.assert_allclose(METHODS.get("linear").evaluate(p, U), y, rtol=1e-12)
    mid = (U[:-1] + U[1:]) / 2
    np.testing.assert_allclose(
        METHODS.get("linear").evaluate(p, mid), (y[:-1] + y[1:]) / 2, rtol=1e-12
    )


def test_pchip_stored_cubic_matches_scipy_and_never_overshoots() -> None:
    y = eq10(U, U[8], U[20], 5e9, 1e9, 1e9) * (1 + 0.03 * np.sin(np.arange(len(U))))
    p = METHODS.get("pchip").fit(U, y)
    q = np.linspace(U[0], U[-1], 997)
    got = METHODS.get("pchip").evaluate(p, q)
    np.testing.assert_allclose(got, PchipInterpolator(U, y)(q), rtol=1e-10)
    i = np.clip(np.searchsorted(U, q) - 1, 0, len(U) - 2)
    lo, hi = np.minimum(y[i], y[i + 1]), np.maximum(y[i], y[i + 1])
    assert np.all(got >= lo * (1 - 1e-12)) and np.all(got <= hi * (1 + 1e-12))


def test_logcurve_recovers_eq10_breakpoints_off_the_grid() -> None:
    u1, u2 = np.log(3e4), np.log(3e6)  # between measured sizes
    y = eq10(U, u1, u2, 5e9, 1e9, 1e9)
    p = METHODS.get("logcurve").fit(U, y)
    assert p["X1"] == pytest.approx(3e4, rel=1e-3)
    assert p["X2"] == pytest.approx(3e6, rel=1e-3)
    assert p["Y1"] == pytest.approx(5e9, rel=1e-4)
    assert p["Y2"] == pytest.approx(1e9, rel=1e-4)
    assert p["A"] == pytest.approx(1e9, rel=1e-3)
    assert p["B"] == pytest.approx((1e9 - 5e9) / (u2 - u1), rel=1e-3)
    assert p["fit_rms_rel"] < 1e-4
    q = np.linspace(U[0], U[-1], 500)
    np.testing.assert_allclose(
        METHODS.get("logcurve").evaluate(p, q), eq10(q, u1, u2, 5e9, 1e9, 1e9), rtol=1e-3
    )


def test_logcurve_reports_its_fit_error_on_a_curve_it_cannot_follow() -> None:
    y = eq10(U, U[8], U[20], 5e9, 1e9, 1e9) * (1 + 0.05 * (-1) ** np.arange(len(U)))
    p = METHODS.get("logcurve").fit(U, y)
    assert 0.03 < p["fit_rms_rel"] < 0.07  # the +-5 % zig-zag is left in the residual


def test_unknown_method_lists_the_valid_ones() -> None:
    with pytest.raises(UserError, match="linear, pchip, logcurve"):
        METHODS.get("spline9")
