"""The tiny project of the CI example (examples/ci/README.md): a project whose kernels
are this benchdb plugin file, so ``ab-change.sh`` needs no virtualenvs
(``BENCHDB_PACKAGE=""``, ``BENCHDB_PLUGIN=kernels.py``).

``tests/examples/test_ci_example.py`` commits it three times, as a pull request's
history would: as it is; with this docstring's last line changed (a no-op); and with
``WORK = 1.1`` (a deliberate 10 % slowdown: the polynomial is evaluated again at the
first tenth of the elements, the same arrays, which no comparison can see but in the time).
"""

from __future__ import annotations

import numpy as np
from benchdb.kernels.plugin import Layout, PluginKernel

BENCHDB_PLUGIN = "tiny"
WORK = 1.0


def setup(shape, precision):
    x = np.random.default_rng(0).random(shape[0]).astype(precision)
    return x, np.empty_like(x), round(shape[0] * (WORK - 1))


def poly(x, y, extra, r):
    for i in range(x.size):
        v = x[i]
        y[i] = (((0.5 * v + 0.25) * v + 0.125) * v + 0.0625) * v + 0.03125
    for i in range(extra):  # WORK - 1 of the elements once more: the same result
        v = x[i]
        y[i] = (((0.5 * v + 0.25) * v + 0.125) * v + 0.0625) * v + 0.03125


def poly_ref(state, r):
    x, y, _ = state
    y[:] = (((0.5 * x + 0.25) * x + 0.125) * x + 0.0625) * x + 0.03125


BENCHDB_KERNELS = [
    PluginKernel(
        name="poly",
        setup=setup,
        step=poly,
        reference=poly_ref,
        flops=8,
        loads=1,
        stores=1,
        layout=Layout(extents=("n",), arrays=2, updates="n", contiguous="n"),
        description="a degree-4 polynomial at every element (Horner)",
        precisions=("float64",),
    )
]
