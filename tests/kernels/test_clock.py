"""The tick-rate calibration: bracketed reads, and an error bound that holds."""

from __future__ import annotations

import time

import pytest
from benchdb.kernels.clock import ClockPair, clock_pair, rate_between, tick, tick_rate


def test_rate_between_gives_the_rate_and_the_half_width_bound():
    start = ClockPair(ticks=1_000, seconds=10.0, width=2e-6)
    end = ClockPair(ticks=1_000 + 3_000_000, seconds=10.001, width=4e-6)
    rate, bound = rate_between(start, end)
    assert rate == pytest.approx(3e9)
    assert bound == pytest.approx(3e-6 / 1e-3)


def test_clock_pair_keeps_the_narrowest_bracket():
    pair = clock_pair(tries=50)
    before = time.perf_counter()
    assert pair.width >= 0
    assert pair.seconds <= before
    assert tick() > pair.ticks


def test_two_calibrations_agree_within_their_error_bounds():
    """An invariant counter and correct bracketing: independent spans give the same rate
    to within the bounds their brackets state (plus 20 ppm for the system clock's
    NTP slewing); reading the clocks unbracketed missed by up to 1 % under load."""
    rates = []
    for _ in range(2):
        start = clock_pair()
        time.sleep(0.05)
        rates.append(rate_between(start, clock_pair()))
    (r1, b1), (r2, b2) = rates
    assert abs(r1 / r2 - 1) <= b1 + b2 + 20e-6
    assert tick_rate() == pytest.approx(r1, rel=b1 + 1e-3)
