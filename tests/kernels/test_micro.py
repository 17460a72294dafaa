"""Micro-kernels (stencils, Jacobi, tridiagonal, STREAM) against their numpy references."""

from __future__ import annotations

import numpy as np
import pytest
from benchdb.kernels import BENCHMARKS, get_benchmark, kernel_info
from benchdb.kernels.builtin import jacobi
from benchdb.kernels.builtin.tridiag import SURFACE_HEATING
from benchdb.kernels.micro import MicroPrepared

from .conftest import PRECISIONS, linear, needs_two_threads, scales_linearly

STREAM = [name for name in BENCHMARKS if name.startswith("stream.")]
SHAPES = {
    "stencil2d5": [(3, 3), (13, 17), (40, 9)],
    "stencil3d7": [(3, 3, 3), (7, 9, 11), (12, 5, 4)],
    "jacobi2d": [(3, 3), (13, 17), (31, 8)],
    "tridiag": [(1, 1), (23, 10), (40, 7)],
    **{name: [(1,), (1001,), (4099,)] for name in STREAM},
}
RTOL = {"float64": 1e-13, "float32": 2e-6}


def replay(prepared: MicroPrepared, shape, precision) -> np.ndarray:
    """The reference's output after as many repetitions as ``prepared`` has done."""
    kernel = prepared.kernel
    state = kernel.setup(shape, precision)
    for r in range(prepared.repetitions_done):
        kernel.reference(state, r)
    return kernel.output(state, prepared.repetitions_done)


def assert_matches(prepared: MicroPrepared, shape, precision) -> None:
    expected = replay(prepared, shape, precision)
    got = prepared.output()
    assert got.dtype == expected.dtype or prepared.name == "stream.sum"
    scale = max(float(np.max(np.abs(expected))), 1e-30)
    assert np.max(np.abs(got - expected)) <= RTOL[precision] * scale * max(1, got.size) ** 0.5


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize(
    ("name", "shape"), [(name, shape) for name, shapes in SHAPES.items() for shape in shapes]
)
def test_matches_reference(name, shape, precision):
    prepared = get_benchmark(name).prepare(shape, precision, 1)
    prepared.run(4)
    assert prepared.repetitions_done == 5  # warm-up plus four
    assert prepared.points == get_benchmark(name).points(shape)
    assert prepared.footprint_bytes == get_benchmark(name).footprint_bytes(shape, precision)
    assert_matches(prepared, shape, precision)


@needs_two_threads
@pytest.mark.parametrize(
    ("name", "shape"),
    [
        ("stencil2d5", (21, 13)),
        ("stencil3d7", (9, 7, 11)),
        ("jacobi2d", (15, 22)),
        ("tridiag", (31, 12)),
        ("stream.triad", (5003,)),
        ("stream.sum", (5003,)),
    ],
)
def test_parallel_matches_reference(name, shape):
    prepared = get_benchmark(name).prepare(shape, "float64", 2)
    prepared.run(3)
    assert_matches(prepared, shape, "float64")


def test_jacobi_converges_to_the_discrete_solution():
    shape = (17, 13)
    u, iterations = jacobi.solve(shape, "float64", tolerance=1e-26, max_iterations=20_000)
    assert iterations < 20_000
    np.testing.assert_allclose(u, jacobi.exact(shape), atol=1e-10)


def test_tridiag_conserves_heat_plus_surface_forcing():
    shape = (57, 30)
    prepared = get_benchmark("tridiag").prepare(shape, "float64", 1)
    before = prepared.checksum()
    prepared.run(20)
    assert prepared.checksum() == pytest.approx(before + 20 * 57 * SURFACE_HEATING, rel=1e-13)


@pytest.mark.parametrize("name", ["stream.sum", "stream.fill", "stencil2d5", "jacobi2d", "tridiag"])
def test_checksum_accumulates_over_repetitions(name):
    """Repetitions feed each other, so their result shows in the checksum."""
    shape = {1: (2048,), 2: (32, 24)}[get_benchmark(name).ndim]
    prepared = get_benchmark(name).prepare(shape, "float64", 1)
    sums = [prepared.checksum()]
    for _ in range(3):
        prepared.run(3)
        sums.append(prepared.checksum())
    assert len(set(sums)) == len(sums)


@pytest.mark.parametrize(
    ("name", "shape"),
    [
        ("stream.triad", (20_000,)),
        ("stream.copy", (20_000,)),
        ("stream.sum", (20_000,)),
        ("stream.fill", (20_000,)),
        ("stencil2d5", (64, 64)),
        ("stencil3d7", (20, 20, 20)),
        ("jacobi2d", (64, 64)),
        ("tridiag", (200, 30)),
    ],
)
def test_time_grows_linearly_with_repetitions(name, shape):
    prepared = get_benchmark(name).prepare(shape, "float64", 1)
    ratios = scales_linearly(prepared, name)
    assert linear(ratios), ratios


@pytest.mark.parametrize("name", STREAM)
def test_stream_setup_allocates_only_its_footprint(name):
    """The memory guard sizes by footprint: a STREAM setup must not allocate more."""
    state = get_benchmark(name).setup((4099,), "float64")
    arrays = [x for x in state if isinstance(x, np.ndarray) and x.size == 4099]
    assert len(arrays) == kernel_info(name).arrays
    assert sum(a.nbytes for a in arrays) == get_benchmark(name).footprint_bytes((4099,), "float64")
