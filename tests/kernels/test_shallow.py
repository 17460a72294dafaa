"""The shallow-water model: reference agreement, conservation, timing structure."""

from __future__ import annotations

import numpy as np
import pytest
from benchdb.kernels import get_benchmark
from benchdb.kernels.builtin.shallow.model import ShallowState, initial_state, mass, reference_run

from .conftest import PRECISIONS, linear, needs_two_threads, scales_linearly

EPS = {"float64": 2.2e-16, "float32": 1.2e-7}


def field_errors(a: ShallowState, b: ShallowState) -> dict[str, float]:
    """Max-norm difference of each field, relative to the field's largest value."""
    return {
        name: float(
            np.max(np.abs(getattr(a, name).astype(np.float64) - getattr(b, name)))
            / np.max(np.abs(getattr(b, name)))
        )
        for name in ShallowState._fields
    }


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("shape", [(16, 16), (33, 20), (7, 45)])
def test_state_after_steps_matches_reference_to_round_off(shape, precision):
    prepared = get_benchmark("shallow").prepare(shape, precision, 1)
    prepared.run(10)
    assert prepared.steps_done == 21  # forward step, 10 plain and 10 timed steps
    got = prepared.state
    assert all(a.dtype == np.dtype(precision) for a in got)
    ref = reference_run(shape, precision, prepared.steps_done)
    # Round-off scale: how far the float32 reference drifts from the float64 one,
    # scaled to this precision's epsilon (velocities come from differences of p).
    single = reference_run(shape, "float32", prepared.steps_done)
    double = ref if precision == "float64" else reference_run(shape, "float64", prepared.steps_done)
    drift = field_errors(single, double)
    scale = EPS[precision] / EPS["float32"]
    for name, err in field_errors(got, ref).items():
        assert err <= 3 * drift[name] * scale + 100 * EPS[precision], name


@needs_two_threads
def test_parallel_matches_serial():
    shape = (24, 18)
    serial = get_benchmark("shallow").prepare(shape, "float64", 1)
    parallel = get_benchmark("shallow").prepare(shape, "float64", 2)
    serial.run(5)
    parallel.run(5)
    for name, err in field_errors(parallel.state, serial.state).items():
        assert err <= 1e-13, name


@pytest.mark.parametrize("precision", PRECISIONS)
def test_mass_is_conserved_over_1000_steps(precision):
    prepared = get_benchmark("shallow").prepare((24, 17), precision, 1)
    before = mass(initial_state((24, 17), precision))
    prepared.advance(999)
    assert prepared.steps_done == 1000
    tolerance = {"float64": 1e-13, "float32": 1e-6}[precision]
    assert abs(prepared.mass() / before - 1) <= tolerance
    assert np.all(np.isfinite(prepared.state.p))


def test_initial_conditions_are_the_originals():
    s = initial_state((8, 6), "float64")
    a, dx = 1.0e6, 1.0e5
    di, dj = 2 * np.pi / 8, 2 * np.pi / 6
    i, j = np.arange(9)[:, None], np.arange(7)[None, :]
    psi = a * np.sin((i + 0.5) * di) * np.sin((j + 0.5) * dj)
    pcf = np.pi**2 * a**2 / (6 * dx) ** 2
    assert s.p[3, 2] == pytest.approx(pcf * (np.cos(6 * di) + np.cos(4 * dj)) + 50000.0)
    assert s.u[4, 2] == pytest.approx(-(psi[4, 3] - psi[4, 2]) / dx)
    assert s.v[2, 4] == pytest.approx((psi[3, 4] - psi[2, 4]) / dx)
    np.testing.assert_array_equal(s.u[0, :], s.u[8, :])  # periodic halo
    np.testing.assert_array_equal(s.v[:, 0], s.v[:, 6])
    np.testing.assert_array_equal(s.uold, s.u)


def test_run_reports_every_loop_copy_boundary_and_step():
    prepared = get_benchmark("shallow").prepare((20, 12), "float64", 1)
    times = prepared.run(4)
    assert set(times) == {k.name for k in get_benchmark("shallow").kernels}
    assert all(t >= 0 for t in times.values())
    assert times["shallow.step"] > 0
    assert prepared.points == 240
    assert prepared.footprint_bytes == 21 * 13 * 13 * 8


def test_time_grows_linearly_with_steps():
    prepared = get_benchmark("shallow").prepare((64, 64), "float64", 1)
    for kernel in ("shallow.step", "shallow.z"):
        ratios = scales_linearly(prepared, kernel)
        assert linear(ratios), (kernel, ratios)
