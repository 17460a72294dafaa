"""A benchdb plugin whose kernels do ``WORK`` times the work their shape says: the
injected slowdown of ``benchmarks/ab_detection.py`` and ``tests/ab``.

Fifteen small loops (STREAM-like, reductions, 1-D to 3-D stencils, a recurrence).
A step repeats its loop until it has done ``WORK`` times the iterations of one pass,
the last pass over a prefix: of the elements (1-D), the rows (2-D) or the lines along
the last extent (3-D); ``WORK = 1.05`` is one pass and 5 % of another.  The arrays keep
the nominal shape on both sides, so the change is more work on the same data at the
same addresses, not a larger array that lands elsewhere against the caches (which
moved single points by 5-15 % either way: docs/findings/ab-comparison.md).  A variant
is this file with another ``WORK`` (:func:`write_variant`), under the same plugin
name, so both sides of ``benchdb ab`` declare the same kernels; its version differs,
as a changed plugin's would.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from benchdb.kernels.plugin import Layout, PluginKernel
from numba import prange

BENCHDB_PLUGIN = "inject"
WORK = 1.0


def _passes(units: int) -> tuple[int, int]:
    """The passes a step makes over ``units`` iterations to do ``WORK`` times the work,
    and how many of them its last pass covers (all of them when ``WORK`` is 1)."""
    total = max(units, round(units * WORK))
    passes = -(-total // units)
    return passes, total - (passes - 1) * units


def _vectors(count: int):
    def setup(shape, precision):
        rng = np.random.default_rng(0)
        arrays = tuple(rng.random(shape[0]).astype(precision) for _ in range(count))
        return (*arrays, arrays[0].dtype.type(0.5), *_passes(shape[0]))

    return setup


def _grid(units):
    """The set-up of a 2-D or 3-D kernel whose pass makes ``units(shape)`` iterations."""

    def setup(shape, precision):
        rng = np.random.default_rng(0)
        a = rng.random(shape).astype(precision)
        return a, a.copy(), a.dtype.type(0.2), *_passes(units(shape))

    return setup


def _inner_rows(shape):
    return shape[0] - 2


def _inner_lines(shape):
    return (shape[0] - 2) * (shape[1] - 2)


def copy(a, b, s, k, e, r):
    for p in range(k):
        hi = e if p == k - 1 else a.size
        for i in prange(hi):
            b[i] = a[i]


def copy_ref(state, r):
    state[1][:] = state[0]


def scale(a, b, s, k, e, r):
    for p in range(k):
        hi = e if p == k - 1 else a.size
        for i in prange(hi):
            b[i] = s * a[i]


def scale_ref(state, r):
    state[1][:] = state[2] * state[0]


def add(a, b, c, s, k, e, r):
    for p in range(k):
        hi = e if p == k - 1 else a.size
        for i in prange(hi):
            c[i] = a[i] + b[i]


def add_ref(state, r):
    state[2][:] = state[0] + state[1]


def triad(a, b, c, s, k, e, r):
    for p in range(k):
        hi = e if p == k - 1 else a.size
        for i in prange(hi):
            a[i] = b[i] + s * c[i]


def triad_ref(state, r):
    state[0][:] = state[1] + state[3] * state[2]


def axpy(a, b, s, k, e, r):
    for p in range(k):
        hi = e if p == k - 1 else a.size
        for i in prange(hi):
            a[i] = 0.5 * a[i] + s * b[i]


def axpy_ref(state, r):
    a, b, s, k, e = state
    for _ in range(k - 1):
        a[:] = 0.5 * a + s * b
    a[:e] = 0.5 * a[:e] + s * b[:e]


def fill(a, b, s, k, e, r):
    for p in range(k):
        hi = e if p == k - 1 else a.size
        for i in prange(hi):
            a[i] = s + r


def fill_ref(state, r):
    state[0][:] = state[2] + r


def total(a, b, s, k, e, r):
    acc = 0.0
    for p in range(k):
        hi = e if p == k - 1 else a.size
        for i in range(hi):
            acc += a[i]
    b[r % b.size] = acc


def total_ref(state, r):
    a, b, _s, k, e = state
    b[r % b.size] = (k - 1) * a.sum() + a[:e].sum()


def dot(a, b, c, s, k, e, r):
    acc = 0.0
    for p in range(k):
        hi = e if p == k - 1 else a.size
        for i in range(hi):
            acc += a[i] * b[i]
    c[r % c.size] = acc


def dot_ref(state, r):
    a, b, c, _s, k, e = state
    c[r % c.size] = (k - 1) * (a @ b) + a[:e] @ b[:e]


def smooth1d(a, b, s, k, e, r):
    for p in range(k):
        hi = min(1 + e, a.size - 1) if p == k - 1 else a.size - 1
        for i in prange(1, hi):
            b[i] = s * (a[i - 1] + a[i] + a[i + 1])


def smooth1d_ref(state, r):
    a, b, s, _k, _e = state
    b[1:-1] = s * (a[:-2] + a[1:-1] + a[2:])


def scan(a, b, s, k, e, r):
    for p in range(k):
        acc = 0.0
        hi = e if p == k - 1 else a.size
        for i in range(hi):
            acc = s * acc + a[i]
            b[i] = acc


def scan_ref(state, r):
    a, b, s, _k, _e = state
    acc = a.dtype.type(0)
    for i in range(a.size):
        acc = s * acc + a[i]
        b[i] = acc


def five(a, b, s, k, e, r):
    for p in range(k):
        hi = 1 + e if p == k - 1 else a.shape[0] - 1
        for i in prange(1, hi):
            for j in range(1, a.shape[1] - 1):
                b[i, j] = s * (a[i, j] + a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])


def five_ref(state, r):
    a, b, s, _k, _e = state
    b[1:-1, 1:-1] = s * (a[1:-1, 1:-1] + a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:])


def nine(a, b, s, k, e, r):
    for p in range(k):
        hi = 1 + e if p == k - 1 else a.shape[0] - 1
        for i in prange(1, hi):
            for j in range(1, a.shape[1] - 1):
                acc = 0.0
                for di in range(-1, 2):
                    for dj in range(-1, 2):
                        acc += a[i + di, j + dj]
                b[i, j] = s * acc


def nine_ref(state, r):
    a, b, s, _k, _e = state
    n, m = a.shape
    acc = sum(a[1 + di : n - 1 + di, 1 + dj : m - 1 + dj] for di in (-1, 0, 1) for dj in (-1, 0, 1))
    b[1:-1, 1:-1] = s * acc


def rows(a, b, s, k, e, r):
    for p in range(k):
        hi = e if p == k - 1 else a.shape[0]
        for i in prange(hi):
            acc = 0.0
            for j in range(a.shape[1]):
                acc += a[i, j]
            b[i, 0] = s * acc


def rows_ref(state, r):
    a, b, s, _k, _e = state
    b[:, 0] = s * a.sum(axis=1)


def columns(a, b, s, k, e, r):
    for p in range(k):
        hi = 1 + e if p == k - 1 else a.shape[0]
        for i in prange(1, hi):
            for j in range(a.shape[1]):
                b[i, j] = s * (a[i, j] - a[i - 1, j])


def columns_ref(state, r):
    a, b, s, _k, _e = state
    b[1:, :] = s * (a[1:, :] - a[:-1, :])


def seven(a, b, s, k, e, r):
    m = a.shape[1] - 2
    for p in range(k):
        hi = e if p == k - 1 else (a.shape[0] - 2) * m
        for q in prange(hi):
            i = 1 + q // m
            j = 1 + q % m
            for z in range(1, a.shape[2] - 1):
                b[i, j, z] = s * (
                    a[i, j, z] + a[i - 1, j, z] + a[i + 1, j, z] + a[i, j - 1, z]
                    + a[i, j + 1, z] + a[i, j, z - 1] + a[i, j, z + 1]
                )  # fmt: skip


def seven_ref(state, r):
    a, b, s, _k, _e = state
    c = a[1:-1, 1:-1, 1:-1]
    b[1:-1, 1:-1, 1:-1] = s * (
        c + a[:-2, 1:-1, 1:-1] + a[2:, 1:-1, 1:-1] + a[1:-1, :-2, 1:-1]
        + a[1:-1, 2:, 1:-1] + a[1:-1, 1:-1, :-2] + a[1:-1, 1:-1, 2:]
    )  # fmt: skip


_1D = Layout(extents=("n",), arrays=2, updates="n", contiguous="n")
_1D3 = Layout(extents=("n",), arrays=3, updates="n", contiguous="n")
_2D = Layout(
    extents=("n", "m"), arrays=2, updates="(n - 2) * (m - 2)", contiguous="m", min_extent=3
)
_3D = Layout(
    extents=("n", "m", "k"),
    arrays=2,
    updates="(n - 2) * (m - 2) * (k - 2)",
    contiguous="k",
    min_extent=3,
)


def _kernel(name, setup, step, reference, flops, loads, stores, layout):
    return PluginKernel(
        name=name,
        setup=setup,
        step=step,
        reference=reference,
        flops=flops,
        loads=loads,
        stores=stores,
        layout=layout,
        description=f"{name}, injected work x WORK",
        precisions=("float64",),
    )


BENCHDB_KERNELS = [
    _kernel("copy", _vectors(2), copy, copy_ref, 0, 1, 1, _1D),
    _kernel("scale", _vectors(2), scale, scale_ref, 1, 1, 1, _1D),
    _kernel("add", _vectors(3), add, add_ref, 1, 2, 1, _1D3),
    _kernel("triad", _vectors(3), triad, triad_ref, 2, 2, 1, _1D3),
    _kernel("axpy", _vectors(2), axpy, axpy_ref, 3, 2, 1, _1D),
    _kernel("fill", _vectors(2), fill, fill_ref, 1, 0, 1, _1D),
    _kernel("total", _vectors(2), total, total_ref, 1, 1, 0, _1D),
    _kernel("dot", _vectors(3), dot, dot_ref, 2, 2, 0, _1D3),
    _kernel("smooth1d", _vectors(2), smooth1d, smooth1d_ref, 3, 1, 1, _1D),
    _kernel("scan", _vectors(2), scan, scan_ref, 2, 1, 1, _1D),
    _kernel("five", _grid(_inner_rows), five, five_ref, 5, 1, 1, _2D),
    _kernel("nine", _grid(_inner_rows), nine, nine_ref, 9, 1, 1, _2D),
    _kernel("rows", _grid(lambda shape: shape[0]), rows, rows_ref, 2, 1, 0, _2D),
    _kernel("columns", _grid(lambda shape: shape[0] - 1), columns, columns_ref, 2, 2, 1, _2D),
    _kernel("seven", _grid(_inner_lines), seven, seven_ref, 7, 1, 1, _3D),
]


def write_variant(folder: Path, work: float) -> Path:
    """This plugin doing ``work`` times the work, as ``folder/inject.py``."""
    text = Path(__file__).read_text().replace("\nWORK = 1.0\n", f"\nWORK = {work!r}\n", 1)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "inject.py"
    path.write_text(text)
    return path
