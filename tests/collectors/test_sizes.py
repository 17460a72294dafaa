"""Size selection: footprints from the machine's caches, inverted into shapes."""

from __future__ import annotations

import dataclasses
import itertools
import math

import pytest
from benchdb.collectors import sizes
from benchdb.kernels import get_benchmark

from benchdb.errors import UserError
from benchdb.machine import detect_machine

MACHINE = detect_machine()


def _other_machine():
    """This machine with twice its caches: the sweep must follow the caches, not constants."""
    caches = tuple(dataclasses.replace(c, size_bytes=2 * c.size_bytes) for c in MACHINE.caches)
    return dataclasses.replace(MACHINE, caches=caches)


def _footprints(machine, density, memory_limit) -> list[int]:
    return [t.footprint for t in sizes.footprint_targets(machine, density, memory_limit)]


@pytest.mark.parametrize("machine", [MACHINE, _other_machine()], ids=["this", "bigger-caches"])
def test_default_sweep_spans_l1_to_beyond_llc(machine) -> None:
    targets = _footprints(machine, sizes.DEFAULT_DENSITY, machine.memory_bytes)
    caches = machine.data_caches()
    llc = caches[-1].size_bytes
    assert targets == sorted(targets)
    assert targets[0] <= caches[0].size_bytes / 4  # L1-resident
    assert max(targets) >= min(3 * llc * 0.99, sizes.MAX_AUTO_FOOTPRINT / 2)
    for cache in caches:  # Kerncraft's 0.66x point and the capacity itself
        for factor in (0.66, 1.0):
            assert any(abs(t / (factor * cache.size_bytes) - 1) < 0.01 for t in targets)
    ratios = [b / a for a, b in itertools.pairwise(targets)]
    # geometric sqrt(2) steps in the caches, 2x beyond; a cache point replaces a neighbour
    # within a quarter step
    assert max(ratios) <= 2**1.25 * 1.01
    assert max(r for r, a in zip(ratios, targets, strict=False) if a < llc) <= 2**0.625 * 1.01


def test_quick_sweep_is_coarser_and_hits_every_level() -> None:
    quick = _footprints(MACHINE, sizes.QUICK_DENSITY, MACHINE.memory_bytes)
    full = _footprints(MACHINE, sizes.DEFAULT_DENSITY, MACHINE.memory_bytes)
    assert len(quick) < len(full) / 3
    for cache in MACHINE.data_caches():
        assert any(t < cache.size_bytes for t in quick)
    llc = MACHINE.last_level_cache().size_bytes
    assert max(quick) >= min(4 * llc * 0.99, sizes.MAX_AUTO_FOOTPRINT / 2)


def test_sweep_is_capped_by_memory() -> None:
    llc = MACHINE.last_level_cache().size_bytes
    targets = _footprints(MACHINE, sizes.DEFAULT_DENSITY, memory_limit=4 * llc)
    assert max(targets) <= 2 * llc


def test_no_caches_asks_for_explicit_sizes() -> None:
    with pytest.raises(UserError, match="--sizes"):
        sizes.footprint_targets(dataclasses.replace(MACHINE, caches=()), sizes.QUICK_DENSITY, 2**30)


@pytest.mark.parametrize("target", [4096, 700_000, 37_000_000, 300_000_000])
def test_shallow_square_shape_is_nearest_footprint(target: int) -> None:
    bench = get_benchmark("shallow")
    m, n = sizes.shape_for_footprint(bench, target, "float64")
    assert m == n
    assert bench.footprint_bytes((m, n), "float64") == (m + 1) * (n + 1) * 13 * 8

    def err(k: int) -> float:
        return abs(math.log(bench.footprint_bytes((k, k), "float64") / target))

    assert err(m) <= err(m - 1) and err(m) <= err(m + 1)


def test_precision_changes_the_shape_not_the_footprint() -> None:
    bench = get_benchmark("stream.triad")
    (n64,) = sizes.shape_for_footprint(bench, 2**20, "float64")
    (n32,) = sizes.shape_for_footprint(bench, 2**20, "float32")
    assert n32 == pytest.approx(2 * n64, abs=1)


def test_tiny_target_gives_smallest_valid_shape() -> None:
    assert sizes.shape_for_footprint(get_benchmark("stencil2d5"), 1, "float64") == (3, 3)


def test_tridiag_grows_columns_at_fixed_depth() -> None:
    targets = [sizes.Target(10**5), sizes.Target(10**7)]
    shapes = [
        p.shape for p in sizes.shapes_for_footprints(get_benchmark("tridiag"), targets, "float64")
    ]
    assert [s[1] for s in shapes] == [100, 100]
    assert shapes[0][0] < shapes[1][0]


@pytest.mark.parametrize(
    ("text", "value"), [("4096", 4096), ("512KiB", 2**19), ("64MiB", 2**26), ("1.5GiB", 3 * 2**29)]
)
def test_parse_footprint(text: str, value: int) -> None:
    assert sizes.parse_footprint(text) == value


@pytest.mark.parametrize("text", ["0", "-1MiB", "abc", "12 parsecs", "0KiB"])
def test_parse_footprint_rejects(text: str) -> None:
    with pytest.raises(UserError, match="positive size"):
        sizes.parse_footprint(text)


def test_explicit_shapes_match_dimensions() -> None:
    specs = ["100x100", "200x300", "5000"]
    assert sizes.explicit_shapes(get_benchmark("shallow"), specs) == [(100, 100), (200, 300)]
    assert sizes.explicit_shapes(get_benchmark("stream.triad"), specs) == [(5000,)]
    with pytest.raises(UserError, match="3 extent"):
        sizes.explicit_shapes(get_benchmark("stencil3d7"), specs)
    with pytest.raises(UserError, match="too small"):
        sizes.explicit_shapes(get_benchmark("stencil2d5"), ["2x2"])


@pytest.mark.parametrize("name", ["shallow", "stencil2d5", "stencil3d7"])
def test_aspect_rectangles_keep_the_footprint_and_stretch_the_rows(name: str) -> None:
    bench = get_benchmark(name)
    footprints = [2**14 * 4**k for k in range(6)]
    targets = [sizes.Target(t, rectangles=i % 2 == 1) for i, t in enumerate(footprints)]
    planned = sizes.shapes_for_footprints(bench, targets, "float64")
    shapes = [p.shape for p in planned]
    squares = [p.shape for p in planned if p.round != sizes.Round.RECTANGLES]
    axis = bench.geometry.contiguous_axis % bench.ndim
    rects = [s for s in shapes if s not in squares]
    assert rects
    for square in squares[1::2]:
        fp = bench.footprint_bytes(square, "float64")
        made = sizes.aspect_shapes(bench, square)
        assert made and all(rect in shapes for rect in made)
        for factor in sizes.ASPECT_FACTORS:
            longer = sizes.row_shape(bench, square, factor)
            shorter = sizes.row_shape(bench, square, 1 / factor)
            if longer is not None:
                assert longer[axis] == factor * square[axis]
            if shorter is not None:
                assert shorter[axis] == square[axis] // factor
        for rect in made:
            assert abs(bench.footprint_bytes(rect, "float64") / fp - 1) < 0.1
    largest = squares[-1]  # large enough for every factor
    assert len(sizes.aspect_shapes(bench, largest)) == 2 * len(sizes.ASPECT_FACTORS)


def test_a_rectangle_that_rounding_turns_into_another_aspect_is_not_measured() -> None:
    bench = get_benchmark("shallow")  # rows along axis 0
    assert sizes.row_shape(bench, (6, 6), 4) is None  # 24x1: a ratio of 24, not 16
    assert sizes.row_shape(bench, (600, 600), 4) == (2400, 150)


def test_no_aspect_rectangles_where_an_aspect_means_nothing() -> None:
    assert sizes.aspect_shapes(get_benchmark("tridiag"), (1000, 100)) == []
    assert sizes.aspect_shapes(get_benchmark("stream.copy"), (1000,)) == []
    assert sizes.QUICK_DENSITY.aspect_every == sizes.QUICK_DENSITY.aspect_every_shared == 0
