"""Each trial's arrays at addresses drawn from its seed, alike on both sides."""

from __future__ import annotations

import gc
import sys

import numpy as np
import pytest
from benchdb.collectors.ab.array_layout import (
    LINE,
    PAGE,
    WINDOW_PAGES,
    WINDOW_START,
    relocate,
)
from benchdb.kernels.registry import get_benchmark


class _State:
    def __init__(self, state: tuple) -> None:
        self.state = state


def _offsets(prepared: _State) -> list[int]:
    return [x.ctypes.data % PAGE for x in prepared.state if isinstance(x, np.ndarray)]


def _fresh() -> _State:
    return _State((np.arange(1000.0), np.ones((30, 40), order="F"), 0.5, np.zeros(7)))


def test_the_same_seed_gives_the_same_page_offsets_and_the_same_values() -> None:
    one, two = _fresh(), _fresh()
    assert relocate(one, 12345) and relocate(two, 12345)
    assert _offsets(one) == _offsets(two)
    assert all(o % LINE == 0 for o in _offsets(one))
    for a, b in zip(one.state, _fresh().state, strict=True):
        np.testing.assert_array_equal(a, b)
    assert one.state[1].flags.f_contiguous and one.state[2] == 0.5


def _addresses(prepared: _State) -> list[int]:
    return [x.ctypes.data for x in prepared.state if isinstance(x, np.ndarray)]


linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="fixed-address mappings are Linux's"
)


@linux_only
def test_the_same_seed_maps_the_arrays_at_the_same_virtual_addresses_in_the_window() -> None:
    """Two processes' heaps drift apart, so only a fixed address gives both sides the
    same pages; a trial's arrays are freed before the next trial maps its own."""
    one = _fresh()
    relocate(one, 99)
    first = _addresses(one)
    assert all(WINDOW_START <= a < WINDOW_START + WINDOW_PAGES * PAGE for a in first)
    del one
    gc.collect()
    two = _fresh()
    relocate(two, 99)
    assert _addresses(two) == first
    for a, b in zip(two.state, _fresh().state, strict=True):
        np.testing.assert_array_equal(a, b)


@linux_only
def test_an_address_already_taken_falls_back_to_the_drawn_offset_on_the_heap() -> None:
    held, other = _fresh(), _fresh()
    relocate(held, 5)
    relocate(other, 5)  # held's mappings still occupy the drawn pages
    assert _offsets(other) == _offsets(held)
    assert not set(_addresses(other)) & set(_addresses(held))
    for a, b in zip(other.state, _fresh().state, strict=True):
        np.testing.assert_array_equal(a, b)


def test_seeds_spread_the_offsets_over_the_page() -> None:
    seen = set()
    for seed in range(40):
        p = _fresh()
        relocate(p, seed)
        seen.add(_offsets(p)[0])
    assert len(seen) > 20


@pytest.mark.parametrize(("name", "shape"), [("stream.triad", (4096,)), ("stencil2d5", (64, 48))])
def test_a_prepared_kernel_runs_and_checks_out_where_it_was_moved(name: str, shape: tuple) -> None:
    bench = get_benchmark(name)
    prepared, expected = (bench.prepare(shape, "float64", 1) for _ in range(2))
    assert relocate(prepared, 7)
    prepared.run(3)
    expected.run(3)
    assert prepared.checksum() == expected.checksum()


def test_a_state_without_arrays_to_move_is_left_alone() -> None:
    class Fields:
        pass

    assert not relocate(Fields(), 1)


def test_a_models_named_fields_are_left_where_they_are() -> None:
    """Shallow's state is a NamedTuple of fields, read by name: not a step's state."""
    bench = get_benchmark("shallow")
    prepared = bench.prepare((32, 32), "float64", 1)
    fields = prepared.state
    assert not relocate(prepared, 3)
    assert prepared.state is fields
