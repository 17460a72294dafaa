"""``prange`` for steps whose module must import without numba.

The built-in kernels' modules hold their metadata, which the predictor reads
and which must not pay for a JIT import (docs/design.md, "Layout and
dependency direction"), next to their steps.  A step takes ``prange`` from
here: run as plain Python it is ``range``, and :func:`.jit.variants` compiles
it with ``numba.prange`` in its place, so the machine code is that of a step
written with numba's own.
"""

from __future__ import annotations


def prange(*args: int) -> range:
    """``range``: the loop numba runs in parallel once the step is compiled."""
    return range(*args)
