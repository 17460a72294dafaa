"""The example plugin (examples/ocean_plugin) against its references and the physics it keeps.

The package is imported from its folder, not installed;
tests/examples/test_examples_in_benchdb.py installs it with pip.
"""

from __future__ import annotations

import sys
from dataclasses import replace

import numpy as np
import pytest
from benchdb.kernels.api import KernelError
from benchdb.kernels.plugin import PluginBenchmark, plugin_benchmarks

from .conftest import EXAMPLES

PRECISIONS = ("float64", "float32")
RTOL = {"float64": 1e-12, "float32": 1e-5}


@pytest.fixture(scope="module")
def ocean():
    sys.path.insert(0, str(EXAMPLES / "ocean_plugin"))
    try:
        import benchdb_ocean

        yield benchdb_ocean
    finally:
        sys.path.remove(str(EXAMPLES / "ocean_plugin"))


@pytest.fixture(scope="module")
def benches(ocean) -> dict[str, PluginBenchmark]:
    return {b.name: b for b in plugin_benchmarks("ocean", ocean.BENCHDB_KERNELS)}


def replay(bench: PluginBenchmark, shape, precision, done: int) -> np.ndarray:
    d = bench.declared
    state = d.setup(shape, precision)
    for r in range(done):
        d.reference(state, r)
    return d.output(state, done)


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize(
    ("name", "shape"),
    [("ocean.upwind", (9, 17)), ("ocean.upwind", (40, 7)), ("ocean.columns", (11, 30)),
     ("ocean.columns", (3, 75))],
)  # fmt: skip
def test_compiled_steps_match_their_references(benches, name, shape, precision) -> None:
    bench = benches[name]
    assert bench.verify(precision, 1) is not None
    prepared = bench.prepare(shape, precision, 1)
    prepared.run(6)
    expected = replay(bench, shape, precision, prepared.repetitions_done)
    got = prepared.output()
    scale = float(np.max(np.abs(expected)))
    assert np.max(np.abs(got - expected)) <= RTOL[precision] * scale


def test_upwind_conserves_the_tracer_and_stays_within_its_bounds(benches) -> None:
    bench = benches["ocean.upwind"]
    prepared = bench.prepare((48, 64), "float64", 1)
    q0 = bench.declared.setup((48, 64), "float64")[0][1:-1, 1:-1]
    prepared.run(199)  # 200 steps: the tracer crosses the periodic boundary
    q = prepared.output()[1:-1, 1:-1]
    assert q.sum() == pytest.approx(q0.sum(), rel=1e-13)
    assert q0.min() - 1e-12 <= q.min() and q.max() <= q0.max() + 1e-12


def test_mixing_conserves_heat_up_to_the_surface_flux(benches, ocean) -> None:
    bench = benches["ocean.columns"]
    shape = (7, 40)
    state = bench.declared.setup(shape, "float64")
    temp, _, dz, *_, dt, flux = state
    before = float(np.sum(temp * dz))
    prepared = bench.prepare(shape, "float64", 1)
    prepared.run(9)  # ten steps
    after = float(np.sum(prepared.output() * dz))
    assert after == pytest.approx(before + 10 * shape[0] * flux * dt, rel=1e-12)


def wrong_step(q, qnew, u, v, r):
    """The upwind step as a plausible bug leaves it: the periodic halo is never filled."""
    src, dst = (q, qnew) if r % 2 == 0 else (qnew, q)
    for j in range(1, src.shape[0] - 1):
        for i in range(1, src.shape[1] - 1):
            ue, uw, vn, vs = u[j, i], u[j, i - 1], v[j, i], v[j - 1, i]
            fe = ue * (src[j, i] if ue > 0 else src[j, i + 1])
            fw = uw * (src[j, i - 1] if uw > 0 else src[j, i])
            gn = vn * (src[j, i] if vn > 0 else src[j + 1, i])
            gs = vs * (src[j - 1, i] if vs > 0 else src[j, i])
            dst[j, i] = src[j, i] - (fe - fw) - (gn - gs)


def test_a_wrong_but_finite_step_is_refused(benches) -> None:
    bad = replace(benches["ocean.upwind"].declared, step=wrong_step)
    [bench] = plugin_benchmarks("ocean", [bad])
    with pytest.raises(KernelError, match=r"ocean\.upwind disagrees with its reference at 13x15"):
        bench.verify("float64", 1)
