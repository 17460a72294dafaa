"""The registry and metadata: names, contract, footprints, no numba on import."""

from __future__ import annotations

import subprocess
import sys

import pytest
from benchdb.kernels import BENCHMARKS, all_kernels, get_benchmark, kernel_info
from benchdb.kernels.builtin.shallow import SHALLOW_LOOPS

EXPECTED = [
    "shallow",
    "stencil2d5",
    "stencil3d7",
    "jacobi2d",
    "tridiag",
    "stream.copy",
    "stream.scale",
    "stream.add",
    "stream.triad",
    "stream.sum",
    "stream.fill",
]


def test_import_does_not_load_numba():
    code = (
        "import sys, benchdb.kernels as k; k.all_kernels(); "
        "k.get_benchmark('shallow').footprint_bytes((8, 8), 'float64'); "
        "print('numba' in sys.modules, 'llvmlite' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_benchmark_names():
    assert list(BENCHMARKS) == EXPECTED
    for name, bench in BENCHMARKS.items():
        assert bench.name == name
        assert get_benchmark(name) is bench


def test_unknown_benchmark_lists_valid_names():
    with pytest.raises(KeyError, match=r"stream\.triad"):
        get_benchmark("nope")
    with pytest.raises(KeyError, match=r"shallow\.cu"):
        kernel_info("nope")


def test_shallow_kernels_follow_table_i():
    flops = {
        "cu": 3,
        "cv": 3,
        "z": 13,
        "h": 9,
        "unew": 10,
        "vnew": 10,
        "pnew": 6,
        "uold": 5,
        "vold": 5,
        "pold": 5,
    }
    assert [k.name for k in get_benchmark("shallow").kernels] == [
        *(f"shallow.{loop}" for loop in SHALLOW_LOOPS),
        "shallow.copy",
        "shallow.boundary",
        "shallow.step",
    ]
    for loop, f in flops.items():
        info = kernel_info(f"shallow.{loop}")
        assert info.flops_per_point == f
        assert info.arrays == 13
    assert kernel_info("shallow.step").flops_per_point == 69
    assert kernel_info("shallow.copy").flops_per_point == 0
    assert kernel_info("shallow.boundary").flops_per_point == 0
    assert {k.name for k in all_kernels()} >= {f"shallow.{x}" for x in flops}


@pytest.mark.parametrize(
    ("shape", "precision", "expected"),
    [
        ((64, 64), "float64", 65 * 65 * 13 * 8),  # paper 003 eq. (9)
        ((31, 17), "float32", 32 * 18 * 13 * 4),
    ],
)
def test_shallow_footprint(shape, precision, expected):
    assert get_benchmark("shallow").footprint_bytes(shape, precision) == expected


def test_micro_footprints():
    assert get_benchmark("stream.triad").footprint_bytes((1000,), "float64") == 24_000
    assert get_benchmark("stream.sum").footprint_bytes((1000,), "float32") == 4_000
    assert get_benchmark("stencil3d7").footprint_bytes((5, 6, 7), "float64") == 2 * 210 * 8
    assert get_benchmark("jacobi2d").footprint_bytes((9, 11), "float64") == 3 * 99 * 8
    ncols, nlevels = 10, 8
    assert get_benchmark("tridiag").points((1, nlevels)) == 4  # column 0 is the shallowest
    points = get_benchmark("tridiag").points((ncols, nlevels))
    assert 4 * ncols <= points <= 8 * ncols
    assert get_benchmark("tridiag").footprint_bytes((ncols, nlevels), "float64") == (
        5 * points * 8 + (ncols + 1) * 8
    )


def test_stream_bytes_with_and_without_write_allocate():
    triad = kernel_info("stream.triad")
    assert triad.bytes_per_point("float64") == 24
    assert triad.bytes_per_point("float64", with_write_allocate=True) == 32
    assert kernel_info("stream.sum").bytes_per_point("float32", with_write_allocate=True) == 4
    assert kernel_info("stream.fill").bytes_per_point("float64", with_write_allocate=True) == 16


@pytest.mark.parametrize(
    ("name", "shape"),
    [
        ("shallow", (8,)),
        ("stencil2d5", (2, 8)),
        ("stream.copy", (0,)),
        ("jacobi2d", (4.5, 4)),
    ],
)
def test_bad_shapes_are_refused(name, shape):
    with pytest.raises(ValueError, match="shape"):
        get_benchmark(name).footprint_bytes(shape, "float64")


def test_bad_precision_and_threads_are_refused():
    with pytest.raises(ValueError, match="float64"):
        get_benchmark("stream.copy").footprint_bytes((8,), "float16")
    with pytest.raises(ValueError, match="threads"):
        get_benchmark("stream.copy").prepare((8,), "float64", 0)


def test_each_shallow_loop_is_rated_over_the_points_it_updates() -> None:
    """Paper 003 section II: the time filter (uold, vold, pold) and the copies update the
    full (M+1)(N+1) arrays; the other loops the inner M x N points."""
    import numpy as np

    from benchdb.predict.basis import rate_basis

    points = get_benchmark("shallow").kernel_points((10, 20))
    full = {"shallow.uold", "shallow.vold", "shallow.pold", "shallow.copy"}
    assert {k for k, n in points.items() if n == 11 * 21} == full
    assert {n for k, n in points.items() if k not in full} == {200}
    assert rate_basis("shallow.pold").points_and_footprint(np.array([[10, 20]]))[0][0] == 231


def test_every_builtin_module_is_a_family_that_registers_itself() -> None:
    """Adding a built-in kernel is adding one module to kernels/builtin (docs/design.md)."""
    from benchdb.kernels import builtin

    modules = builtin.families()
    assert [m.ORDER for m in modules] == sorted(m.ORDER for m in modules)
    assert [b.name for m in modules for b in m.BENCHDB_KERNELS] == EXPECTED


def test_a_builtin_step_is_compiled_with_numbas_prange() -> None:
    """A family's steps see kernels.loops.prange (plain range) in Python and numba.prange
    once compiled, so the parallel variant runs in parallel."""
    import numba
    from benchdb.kernels import loops
    from benchdb.kernels.builtin import stream

    step = get_benchmark("stream.triad").compiled.step
    assert stream.prange is loops.prange
    for variant in (step.serial, step.parallel):
        assert variant.py_func.__code__ is stream.triad.__code__
        assert variant.py_func.__globals__["prange"] is numba.prange
