"""Combining measurements into one curve; pathological points flagged, not dropped."""

from __future__ import annotations

import numpy as np

from benchdb.predict.curve import build_curve


def row(mid: int, run: int, fp: int, t: float, spread: float = 0.0, flags=(), shape="1x1"):
    samples = [t * (1 + spread * d) for d in (-1, -0.5, 0, 0.5, 1)]
    return {
        "measurement_id": mid,
        "run_id": run,
        "footprint_bytes": fp,
        "points": 1000,
        "t_median": t,
        "samples": samples,
        "flags": list(flags),
        "shape_key": shape,
    }


def test_runs_at_one_footprint_combine_by_median_of_medians_and_pooled_spread() -> None:
    rows = [
        row(1, 1, 100, 1.0e-6),
        row(2, 2, 100, 1.1e-6),
        row(3, 3, 100, 2.0e-6),
        row(4, 1, 200, 1e-6),
    ]
    c = build_curve(rows, work_per_point=2.0)
    assert list(c.footprint) == [100, 200]
    assert c.rate[0] == np.median([2000 / 1e-6, 2000 / 1.1e-6, 2000 / 2e-6])
    assert c.n_samples[0] == 15
    assert c.spread[0] > 0.1  # the disagreement between runs shows in the uncertainty
    assert c.measurement_ids[0] == (1, 2, 3) and c.run_ids == (1, 2, 3)


def test_spread_is_the_relative_iqr_of_the_samples() -> None:
    c = build_curve([row(1, 1, 100, 1e-6, spread=0.04)], work_per_point=1.0)
    assert abs(c.spread[0] - 0.04) < 2e-3


def test_isolated_spike_and_dip_are_flagged_but_a_cache_step_is_not() -> None:
    times = [1, 1, 0.5, 1, 1, 2, 2, 3, 3, 3]  # dip in time = spike in rate at 2; step at 5..7
    times[8] = 6  # a dip in rate
    rows = [
        row(i, 1, 100 * (i + 1), t * 1e-6, flags=["noisy"] if i == 3 else [])
        for i, t in enumerate(times)
    ]
    c = build_curve(rows, work_per_point=1.0)
    assert "spike" in c.flags[2] and "dip" in c.flags[8]
    assert c.flags[3] == ("noisy",)
    assert not any(c.flags[i] for i in (4, 5, 6))
    assert len(c) == 10  # nothing dropped


def passes_row(mid: int, fp: int, pass_times: list[float]) -> dict:
    """A point measured in ``len(pass_times)`` passes of 5 samples, each pass's samples
    spread +-30 % around its time (a thrashing point scatters)."""
    samples = [t * (1 + 0.3 * d) for t in pass_times for d in (-1, -0.5, 0, 0.5, 1)]
    return {**row(mid, 1, fp, float(np.median(samples))), "samples": samples, "passes": 3}


def test_a_scattered_point_every_pass_of_which_is_slow_is_a_dip() -> None:
    """Its spread (30 %) hides it from the margin test; its repeats all lie 15-25 %
    below both neighbours; a point one of whose passes is not below is no dip."""
    rows = [row(1, 1, 100, 1.0), row(2, 1, 300, 1.0), row(5, 1, 900, 1.0)]
    dip = [*rows, passes_row(3, 200, [1 / 0.85, 1 / 0.8, 1 / 0.75])]
    c = build_curve(dip, 1.0)
    assert c.spread[1] > 0.3 and "dip" in c.flags[1]
    assert c.repeat_high[1] < 0.9 * c.rate[0]
    straddles = [*rows, passes_row(3, 200, [1 / 0.95, 1 / 0.8, 1 / 0.75])]
    assert "dip" not in build_curve(straddles, 1.0).flags[1]
    spike = [*rows, passes_row(3, 200, [1 / 1.2, 1 / 1.25, 1 / 1.3])]
    assert "spike" in build_curve(spike, 1.0).flags[1]
    one_pass = [*rows, row(3, 1, 200, 1 / 0.8, spread=0.3)]
    assert build_curve(one_pass, 1.0).flags[1] == ()
