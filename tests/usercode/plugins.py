"""Plugin modules for the plugin tests: the smoothing kernel of docs/plugins.md, variants of it."""

from __future__ import annotations

from pathlib import Path

SMOOTH = """
import numpy as np
from numba import prange

from benchdb.kernels.plugin import Layout, PluginKernel

BENCHDB_PLUGIN = "{plugin}"


def setup(shape, precision):
    n, m = shape
    a = np.random.default_rng(0).random((n, m)).astype(precision)
    return a, a.copy(), a.dtype.type(0.25)


def smooth(a, b, c, r):
    src, dst = (a, b) if r % 2 == 0 else (b, a)
    for i in prange(1, src.shape[0] - 1):
        for j in range(1, src.shape[1] - 1):
            dst[i, j] = {coefficient} * (
                src[i - 1, j] + src[i + 1, j] + src[i, j - 1] + src[i, j + 1]
            ){extra}


def smooth_reference(state, r):
    a, b, c = state
    src, dst = (a, b) if r % 2 == 0 else (b, a)
    dst[1:-1, 1:-1] = c * (src[:-2, 1:-1] + src[2:, 1:-1] + src[1:-1, :-2] + src[1:-1, 2:])


BENCHDB_KERNELS = [
    PluginKernel(
        name="smooth",
        setup=setup,
        step=smooth,
        reference=smooth_reference,
        output=lambda state, done: state[1] if done % 2 else state[0],
        flops=4,
        loads=3,
        stores=1,
        layout=Layout(
            extents=("n", "m"), arrays=2, updates="(n - 2) * (m - 2)", contiguous="m",
            min_extent=3,
        ),
        description="4-point smoothing",
    ),
]
"""


def plugin_file(
    folder: Path, *, plugin: str = "mine", coefficient: str = "c", extra: str = "", head: str = ""
) -> Path:
    """Write ``folder/my_kernels.py``; ``coefficient``/``extra`` alter the compiled step."""
    path = folder / "my_kernels.py"
    path.write_text(head + SMOOTH.format(plugin=plugin, coefficient=coefficient, extra=extra))
    return path
