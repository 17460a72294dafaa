"""Fitting the postal and max-rate models recovers known parameters."""

from __future__ import annotations

import numpy as np
import pytest

from benchdb.comm import fit_piecewise, fit_regime, load_machine_file, maxrate_time


def _sizes() -> list[int]:
    return sorted({2**i for i in range(0, 23)} | {1536, 3072, 49152, 98304})


def test_piecewise_fit_finds_the_regimes_of_summit_inter_node() -> None:
    """Data generated from Choi et al. Table 2 (Summit, inter-node) are fitted back."""
    truth = load_machine_file("summit").postal["inter-node"]
    n = _sizes()
    rng = np.random.default_rng(1)
    t = [truth.time(x) * (1 + rng.normal(0, 0.005)) for x in n]
    fit = fit_piecewise(n, t)
    assert [r.name for r in fit.model.regimes] == ["short", "eager", "rendezvous"]
    for got, want in zip(fit.model.regimes, truth.regimes, strict=True):
        assert got.alpha == pytest.approx(want.alpha, rel=0.1)
        assert got.beta == pytest.approx(want.beta, rel=0.1)
    # breakpoints land on the measured sizes bracketing the true thresholds
    assert fit.model.regimes[0].max_bytes in (1024, 1536)
    assert fit.model.regimes[1].max_bytes in (65536,)
    assert fit.accuracy()["median_rel_error"] < 0.01


def test_one_straight_line_stays_one_regime() -> None:
    n = _sizes()
    fit = fit_piecewise(n, [2e-6 + 1e-10 * x for x in n])
    assert len(fit.model.regimes) == 1
    assert fit.model.regimes[0].alpha == pytest.approx(2e-6, rel=1e-6)


def test_one_point_at_a_protocol_switch_does_not_tilt_its_regime() -> None:
    """MPICH's last eager size (8184 B here) costs as much as a rendezvous message."""
    eager = [2**i for i in range(0, 13)] + [6144]
    rendezvous = [8192, 12288, 16384, 32768, 65536, 131072, 1 << 20]
    t = [0.8e-6 + x / 25e9 for x in eager] + [2.3e-6] + [2.6e-6 + x / 14e9 for x in rendezvous]
    fit = fit_piecewise([*eager, 8184, *rendezvous], t)
    first = fit.model.regimes[0]
    assert first.alpha == pytest.approx(0.8e-6, rel=0.02)
    assert 1 / first.beta == pytest.approx(25e9, rel=0.1)
    assert fit.accuracy()["median_rel_error"] < 0.005


def test_piecewise_fit_rejects_unusable_data() -> None:
    with pytest.raises(ValueError):
        fit_piecewise([8], [1e-6])
    with pytest.raises(ValueError):
        fit_piecewise([8, 16], [1e-6, 0.0])


def test_maxrate_fit_recovers_summit_eager_parameters() -> None:
    """Choi et al. Table 4 (Summit inter-node eager): α 2.39 µs, R_Cb 6.68e9, R_Ci 1.27e9."""
    machine = load_machine_file("summit")
    postal = machine.postal["inter-node"].regimes[1]
    n = np.array([4096, 8192, 16384, 32768, 65536] * 6, dtype=float)
    k = np.repeat(np.arange(1, 7), 5).astype(float)
    t = maxrate_time(n, k, 2.39e-6, 6.68e9, 1.27e9)
    fit = fit_regime(postal, n, k, t, short=False)
    assert fit.form == "maxrate"
    assert (fit.alpha, fit.r_cb, fit.r_ci) == pytest.approx((2.39e-6, 6.68e9, 1.27e9), rel=1e-3)
    assert fit.time(65536, 3) == pytest.approx(maxrate_time(65536, 3, 2.39e-6, 6.68e9, 1.27e9))


def test_maxrate_short_form_and_postal_fallback() -> None:
    postal = load_machine_file("summit").postal["inter-node"].regimes[0]
    n = np.array([8, 64, 256, 1024] * 3, dtype=float)
    k = np.repeat([1.0, 2.0, 4.0], 4)
    short = fit_regime(postal, n, k, 1.51e-6 + k * n * 6.32e-10, short=True)
    assert short.form == "short"
    assert (short.alpha, short.beta) == pytest.approx((1.51e-6, 6.32e-10), rel=1e-3)
    one_k = fit_regime(postal, n[:4], k[:4], 1.51e-6 + n[:4] * 6.32e-10, short=True)
    assert one_k.form == "postal" and "one value of k" in one_k.reason
    assert one_k.alpha == postal.alpha and one_k.beta == postal.beta
    assert short.time(1024, 4) == pytest.approx(1.51e-6 + 4 * 1024 * 6.32e-10, rel=1e-3)  # eq. 3


@pytest.mark.parametrize("k", [1, 2, 6])
def test_the_fallback_is_the_postal_model_whatever_k(k: int) -> None:
    """Paper 002 eq. 1, ``T = α + n·β``: with no max-rate fit, k concurrent senders are not
    charged k times the bandwidth term (that would be eq. 3 with the postal β)."""
    postal = load_machine_file("summit").postal["inter-node"].regimes[1]
    fallen = fit_regime(postal, np.array([4096.0]), np.array([1.0]), np.array([3e-6]), short=False)
    assert fallen.form == "postal"
    assert fallen.time(65536, k) == pytest.approx(postal.alpha + 65536 * postal.beta)
    assert fallen.per_byte(k) == postal.beta
