"""A benchdb plugin whose kernels do ``WORK`` times the work their shape says: the
injected slowdown of ``benchmarks/ab_detection.py`` and ``tests/ab``.

Fifteen small loops (STREAM-like, reductions, 1-D to 3-D stencils, a recurrence).
Each kernel's first extent is stretched by ``WORK`` when its data are set up, while
its shape, points and footprint stay the nominal ones: the comparison cannot know.
A variant is this file with another ``WORK`` (:func:`write_variant`), under the same
plugin name, so both sides of ``benchdb ab`` declare the same kernels; its version
differs, as a changed plugin's would.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from benchdb.kernels.plugin import Layout, PluginKernel
from numba import prange

BENCHDB_PLUGIN = "inject"
WORK = 1.0


def _n(n: int) -> int:
    return max(n, round(n * WORK))


def _vectors(count: int):
    def setup(shape, precision):
        rng = np.random.default_rng(0)
        arrays = tuple(rng.random(_n(shape[0])).astype(precision) for _ in range(count))
        return (*arrays, arrays[0].dtype.type(0.5))

    return setup


def _grid(shape, precision):
    rng = np.random.default_rng(0)
    a = rng.random((_n(shape[0]), *shape[1:])).astype(precision)
    return a, a.copy(), a.dtype.type(0.2)


def copy(a, b, s, r):
    for i in prange(a.size):
        b[i] = a[i]


def copy_ref(state, r):
    state[1][:] = state[0]


def scale(a, b, s, r):
    for i in prange(a.size):
        b[i] = s * a[i]


def scale_ref(state, r):
    state[1][:] = state[2] * state[0]


def add(a, b, c, s, r):
    for i in prange(a.size):
        c[i] = a[i] + b[i]


def add_ref(state, r):
    state[2][:] = state[0] + state[1]


def triad(a, b, c, s, r):
    for i in prange(a.size):
        a[i] = b[i] + s * c[i]


def triad_ref(state, r):
    state[0][:] = state[1] + state[3] * state[2]


def axpy(a, b, s, r):
    for i in prange(a.size):
        a[i] = 0.5 * a[i] + s * b[i]


def axpy_ref(state, r):
    state[0][:] = 0.5 * state[0] + state[2] * state[1]


def fill(a, b, s, r):
    for i in prange(a.size):
        a[i] = s + r


def fill_ref(state, r):
    state[0][:] = state[2] + r


def total(a, b, s, r):
    acc = 0.0
    for i in range(a.size):
        acc += a[i]
    b[r % b.size] = acc


def total_ref(state, r):
    state[1][r % state[1].size] = state[0].sum()


def dot(a, b, c, s, r):
    acc = 0.0
    for i in range(a.size):
        acc += a[i] * b[i]
    c[r % c.size] = acc


def dot_ref(state, r):
    state[2][r % state[2].size] = state[0] @ state[1]


def smooth1d(a, b, s, r):
    for i in prange(1, a.size - 1):
        b[i] = s * (a[i - 1] + a[i] + a[i + 1])


def smooth1d_ref(state, r):
    a, b, s = state
    b[1:-1] = s * (a[:-2] + a[1:-1] + a[2:])


def scan(a, b, s, r):
    acc = 0.0
    for i in range(a.size):
        acc = s * acc + a[i]
        b[i] = acc


def scan_ref(state, r):
    a, b, s = state
    acc = a.dtype.type(0)
    for i in range(a.size):
        acc = s * acc + a[i]
        b[i] = acc


def five(a, b, s, r):
    for i in prange(1, a.shape[0] - 1):
        for j in range(1, a.shape[1] - 1):
            b[i, j] = s * (a[i, j] + a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])


def five_ref(state, r):
    a, b, s = state
    b[1:-1, 1:-1] = s * (a[1:-1, 1:-1] + a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:])


def nine(a, b, s, r):
    for i in prange(1, a.shape[0] - 1):
        for j in range(1, a.shape[1] - 1):
            acc = 0.0
            for di in range(-1, 2):
                for dj in range(-1, 2):
                    acc += a[i + di, j + dj]
            b[i, j] = s * acc


def nine_ref(state, r):
    a, b, s = state
    n, m = a.shape
    acc = sum(a[1 + di : n - 1 + di, 1 + dj : m - 1 + dj] for di in (-1, 0, 1) for dj in (-1, 0, 1))
    b[1:-1, 1:-1] = s * acc


def rows(a, b, s, r):
    for i in prange(a.shape[0]):
        acc = 0.0
        for j in range(a.shape[1]):
            acc += a[i, j]
        b[i, 0] = s * acc


def rows_ref(state, r):
    a, b, s = state
    b[:, 0] = s * a.sum(axis=1)


def columns(a, b, s, r):
    for i in prange(1, a.shape[0]):
        for j in range(a.shape[1]):
            b[i, j] = s * (a[i, j] - a[i - 1, j])


def columns_ref(state, r):
    a, b, s = state
    b[1:, :] = s * (a[1:, :] - a[:-1, :])


def seven(a, b, s, r):
    for i in prange(1, a.shape[0] - 1):
        for j in range(1, a.shape[1] - 1):
            for k in range(1, a.shape[2] - 1):
                b[i, j, k] = s * (
                    a[i, j, k] + a[i - 1, j, k] + a[i + 1, j, k] + a[i, j - 1, k]
                    + a[i, j + 1, k] + a[i, j, k - 1] + a[i, j, k + 1]
                )  # fmt: skip


def seven_ref(state, r):
    a, b, s = state
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
    _kernel("five", _grid, five, five_ref, 5, 1, 1, _2D),
    _kernel("nine", _grid, nine, nine_ref, 9, 1, 1, _2D),
    _kernel("rows", _grid, rows, rows_ref, 2, 1, 0, _2D),
    _kernel("columns", _grid, columns, columns_ref, 2, 2, 1, _2D),
    _kernel("seven", _grid, seven, seven_ref, 7, 1, 1, _3D),
]


def write_variant(folder: Path, work: float) -> Path:
    """This plugin doing ``work`` times the work, as ``folder/inject.py``."""
    text = Path(__file__).read_text().replace("\nWORK = 1.0\n", f"\nWORK = {work!r}\n", 1)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "inject.py"
    path.write_text(text)
    return path
