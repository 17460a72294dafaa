"""Layouts: a user's shape declared as data, evaluated for one shape or many at once."""

from __future__ import annotations

import numpy as np
import pytest
from benchdb.kernels.api import KernelError
from benchdb.kernels.builtin.shallow import SHALLOW
from benchdb.kernels.expr import ExpressionError, compile_expression
from benchdb.kernels.layout import Layout

SHALLOW_LIKE = Layout(extents=("M", "N"), arrays=13, halo=(1, 1), contiguous="M")


def test_arrays_and_halo_give_the_shallow_models_footprint() -> None:
    for shape in [(1, 1), (64, 48), (700, 300)]:
        assert SHALLOW_LIKE.geometry().footprint_bytes(shape, "float64") == SHALLOW.footprint_bytes(
            shape, "float64"
        )
    assert SHALLOW_LIKE.contiguous_axis == 0


def test_updates_inner_full_or_an_expression() -> None:
    full = Layout(extents=("M", "N"), arrays=1, halo=(1, 1), updates="full")
    inner = Layout(extents=("M", "N"), arrays=1, halo=(1, 1))
    interior = Layout(extents=("M", "N"), arrays=1, updates="(M - 2) * (N - 2)")
    assert (full.points((10, 20)), inner.points((10, 20)), interior.points((10, 20))) == (
        231,
        200,
        144,
    )


def test_expressions_evaluate_on_numpy_columns() -> None:
    layout = Layout(extents=("n", "m"), bytes="(5 * n * m + 2 * max(n, m)) * itemsize")
    cols = (np.array([10, 30]), np.array([20, 5]))
    np.testing.assert_array_equal(layout.footprint(cols, 8), [(1000 + 40) * 8, (750 + 60) * 8])
    assert layout.geometry().footprint_bytes((10, 20), "float32") == 1040 * 4


@pytest.mark.parametrize(
    "text",
    ["__import__('os').system('true')", "n.bit_length()", "[n]", "n if n else 1", "lambda: n", "x"],
)
def test_only_arithmetic_is_accepted(text: str) -> None:
    with pytest.raises(ExpressionError):
        compile_expression(text, ["n"])


@pytest.mark.parametrize(
    ("fields", "needle"),
    [
        ({"extents": ()}, "extents is empty"),
        ({"extents": ("n", "n"), "arrays": 1}, "twice"),
        ({"extents": ("itemsize",), "arrays": 1}, "extent name"),
        ({"extents": ("n",)}, "not both and not neither"),
        ({"extents": ("n",), "arrays": 0}, "positive integer"),
        ({"extents": ("n",), "arrays": 1, "min_extent": 0}, "min_extent"),
        ({"extents": ("n",), "bytes": "n", "halo": (2,)}, "halo applies to arrays"),
    ],
)
def test_inconsistent_layouts_are_refused(fields: dict, needle: str) -> None:
    with pytest.raises(KernelError, match=None) as caught:
        Layout(**fields)
    assert needle in str(caught.value)


def test_a_layout_survives_the_database_round_trip() -> None:
    layout = Layout(extents=("n", "m"), bytes="n * m * itemsize", updates="n * m - 4", min_extent=3)
    again = Layout.from_json(layout.to_json())
    assert again == layout and again.points((5, 6)) == 26
    with pytest.raises(KernelError, match="must be a positive number"):
        Layout(extents=("n",), arrays=1, updates="n - 5").check((3,), 8)
