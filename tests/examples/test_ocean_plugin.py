"""The example plugin (examples/ocean_plugin) against its references and the physics it keeps.

The package is imported from its folder, not installed (the pip install, listing, sweep
and prediction are tested in test_examples_in_benchdb.py).  The kernels go through the
same machinery as any plugin: ``plugin_benchmarks``, ``verify``, ``prepare`` and ``run``.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from types import ModuleType

import numba
import numpy as np
import pytest
from benchdb.kernels.api import KernelError, Verification
from benchdb.kernels.plugin import PluginBenchmark, plugin_benchmarks

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ocean_plugin"
PRECISIONS = ("float64", "float32")
# Largest difference from the reference replay, relative to its largest value.
REPLAY_TOLERANCE = {"float64": 1e-12, "float32": 5e-5}
# Conservation and bounds, relative: float64 to round-off, float32 to its own.
PHYSICS_TOLERANCE = {"float64": 1e-12, "float32": 1e-5}
NAMES = ("ocean.upwind", "ocean.columns")


@pytest.fixture(scope="module")
def ocean() -> ModuleType:
    """benchdb_ocean imported from the example's folder (never an installed copy)."""
    for name in [m for m in sys.modules if m == "benchdb_ocean" or m.startswith("benchdb_ocean.")]:
        del sys.modules[name]
    sys.path.insert(0, str(EXAMPLE))
    try:
        import benchdb_ocean
    finally:
        sys.path.remove(str(EXAMPLE))
    assert Path(benchdb_ocean.__file__).parent == EXAMPLE / "benchdb_ocean"
    return benchdb_ocean


@pytest.fixture(scope="module")
def benches(ocean: ModuleType) -> dict[str, PluginBenchmark]:
    return {b.name: b for b in plugin_benchmarks("ocean", ocean.BENCHDB_KERNELS)}


def replay(bench: PluginBenchmark, shape: tuple[int, ...], precision: str, done: int):
    """The output after ``done`` repetitions of the numpy reference from a fresh setup."""
    d = bench.declared
    state = d.setup(shape, precision)
    for r in range(done):
        d.reference(state, r)
    return d.output(state, done)


def relative_error(got: np.ndarray, expected: np.ndarray) -> float:
    expected = np.asarray(expected, dtype=np.float64)
    diff = np.abs(np.asarray(got, dtype=np.float64) - expected)
    return float(np.max(diff) / np.max(np.abs(expected)))


def test_the_plugin_declares_two_kernels_with_honest_footprints(benches) -> None:
    assert set(benches) == set(NAMES)
    for name, shape in (("ocean.upwind", (30, 70)), ("ocean.columns", (7, 11, 13))):
        bench = benches[name]
        for precision in PRECISIONS:
            state = bench.declared.setup(shape, precision)
            arrays = [a for a in state if isinstance(a, np.ndarray)]
            assert all(a.dtype == np.dtype(precision) for a in arrays)
            assert all(a.flags.c_contiguous for a in arrays)
            assert bench.footprint_bytes(shape, precision) == sum(a.nbytes for a in arrays)
        assert bench.points(shape) == int(np.prod(shape))
    assert benches["ocean.upwind"].footprint_bytes((700, 300), "float64") == 4 * 702 * 302 * 8


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("name", NAMES)
def test_verify_accepts_the_compiled_steps(benches, name, precision) -> None:
    found = benches[name].verify(precision, 1)
    assert isinstance(found, Verification)
    assert found.benchmark == name and found.precision == precision


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize(
    ("name", "shape"),
    [
        ("ocean.upwind", (9, 17)),
        ("ocean.upwind", (40, 7)),
        ("ocean.columns", (5, 3, 19)),
        ("ocean.columns", (23, 6, 4)),
    ],
)
def test_compiled_steps_match_a_reference_replay(benches, name, shape, precision) -> None:
    bench = benches[name]
    prepared = bench.prepare(shape, precision, 1)
    prepared.run(3)
    prepared.run(4)  # two calls: the repetition index carries over between them
    assert prepared.repetitions_done == 8
    got = prepared.output()
    assert got.dtype == np.dtype(precision)
    expected = replay(bench, shape, precision, prepared.repetitions_done)
    assert relative_error(got, expected) <= REPLAY_TOLERANCE[precision]
    start = bench.declared.output(bench.declared.setup(shape, precision), 0)
    assert relative_error(start, expected) > 1e3 * REPLAY_TOLERANCE[precision]  # it moved


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="numba has fewer than 2 threads")
@pytest.mark.parametrize("name", NAMES)
def test_the_parallel_variant_agrees_too(benches, name) -> None:
    assert isinstance(benches[name].verify("float64", 2), Verification)


@pytest.mark.parametrize("precision", PRECISIONS)
def test_upwind_conserves_the_tracer_and_makes_no_new_extrema(benches, precision) -> None:
    bench = benches["ocean.upwind"]
    shape = (48, 64)
    q0 = bench.declared.output(bench.declared.setup(shape, precision), 0).astype(np.float64)
    prepared = bench.prepare(shape, precision, 1)
    prepared.run(199)  # 200 steps: the blob and the front cross the periodic seams
    q = prepared.output().astype(np.float64)
    tol = PHYSICS_TOLERANCE[precision]
    assert q.sum() == pytest.approx(q0.sum(), rel=tol)
    assert q.min() >= q0.min() - tol * q0.max()
    assert q.max() <= q0.max() + tol * q0.max()
    assert np.max(np.abs(q - q0)) > 0.1  # advected, not left in place


def heat(state: tuple) -> float:
    """sum(e3t T) over every column: the heat content, in K m per unit area."""
    temp, _, e3t = state[:3]
    return float(np.sum(e3t.astype(np.float64)[:, None, None] * temp.astype(np.float64)))


@pytest.mark.parametrize("precision", PRECISIONS)
def test_mixing_conserves_heat_up_to_the_surface_flux(benches, precision) -> None:
    bench = benches["ocean.columns"]
    shape = (30, 7, 9)
    state = bench.declared.setup(shape, precision)
    dt, flux = float(state[-2]), float(state[-1])
    prepared = bench.prepare(shape, precision, 1)
    prepared.run(9)
    gained = heat(prepared.state) - heat(state)
    expected = prepared.repetitions_done * shape[1] * shape[2] * dt * flux
    assert gained == pytest.approx(expected, abs=PHYSICS_TOLERANCE[precision] * heat(state))
    assert gained > 0
    top = prepared.output()[:3].astype(np.float64)  # the mixed layer has been stirred
    assert np.ptp(top, axis=0).max() < np.ptp(state[0][:3].astype(np.float64), axis=0).max()


@pytest.mark.parametrize("precision", PRECISIONS)
def test_mixing_without_a_flux_keeps_heat_and_bounds(benches, precision) -> None:
    """Backward-Euler diffusion only redistributes: the heat stays and no temperature leaves
    the initial range (its matrix is an M-matrix whose rows add up to the thickness)."""
    declared = benches["ocean.columns"].declared

    def calm(shape, precision):
        *state, flux = declared.setup(shape, precision)
        return (*state, flux.dtype.type(0.0))

    [bench] = plugin_benchmarks("ocean", [replace(declared, setup=calm)])
    shape = (25, 4, 6)
    state = calm(shape, precision)
    prepared = bench.prepare(shape, precision, 1)
    prepared.run(19)
    tol = PHYSICS_TOLERANCE[precision]
    assert heat(prepared.state) == pytest.approx(heat(state), rel=tol)
    temp, start = prepared.output().astype(np.float64), state[0].astype(np.float64)
    assert start.min() * (1 - tol) <= temp.min() and temp.max() <= start.max() * (1 + tol)


def scaling_ratios(prepared, name: str, tries: int = 5, samples: int = 9) -> list[float]:
    """min time(2R) / min time(R), up to ``tries`` times until one is in [1.5, 3].

    R makes a sample last a few milliseconds; the R and 2R samples are interleaved and
    each side keeps its minimum, since interference on a shared machine only adds time.
    """
    once = max(prepared.run(1)[name], 1e-7)
    reps = max(2, int(0.004 / once))
    ratios: list[float] = []
    for _ in range(tries):
        single, double = [], []
        for _ in range(samples):
            single.append(prepared.run(reps)[name])
            double.append(prepared.run(2 * reps)[name])
        ratios.append(min(double) / min(single))
        if 1.5 <= ratios[-1] <= 3.0:
            break
    return ratios


@pytest.mark.parametrize(
    ("name", "shape"), [("ocean.upwind", (200, 256)), ("ocean.columns", (30, 40, 64))]
)
def test_time_grows_with_the_repetitions(benches, name, shape) -> None:
    prepared = benches[name].prepare(shape, "float64", 1)
    ratios = scaling_ratios(prepared, name)
    assert any(1.5 <= r <= 3.0 for r in ratios), ratios
    assert np.all(np.isfinite(prepared.output()))


def wrong_step(q, qnew, u, v, cx, cy, r):
    """The upwind step with a plausible bug: the north-south fluxes scaled by dt/dx."""
    src, dst = (q, qnew) if r % 2 == 0 else (qnew, q)
    ny = src.shape[0] - 2
    nx = src.shape[1] - 2
    for i in range(nx + 2):
        src[0, i] = src[ny, i]
        src[ny + 1, i] = src[1, i]
    for j in range(ny + 2):
        src[j, 0] = src[j, nx]
        src[j, nx + 1] = src[j, 1]
    for j in range(1, ny + 1):
        for i in range(1, nx + 1):
            ue = u[j, i]
            uw = u[j, i - 1]
            vn = v[j, i]
            vs = v[j - 1, i]
            fe = ue * (src[j, i] if ue > 0 else src[j, i + 1])
            fw = uw * (src[j, i - 1] if uw > 0 else src[j, i])
            gn = vn * (src[j, i] if vn > 0 else src[j + 1, i])
            gs = vs * (src[j - 1, i] if vs > 0 else src[j, i])
            dst[j, i] = src[j, i] - cx * (fe - fw) - cx * (gn - gs)


def test_a_wrong_coefficient_is_refused(benches) -> None:
    bad = replace(benches["ocean.upwind"].declared, step=wrong_step)
    [bench] = plugin_benchmarks("ocean", [bad])
    prepared = bench.prepare((13, 15), "float64", 1)
    prepared.run(3)
    assert np.all(np.isfinite(prepared.output()))  # refused for its values, not for NaN
    with pytest.raises(KernelError, match="disagrees with its reference"):
        bench.verify("float64", 1)
