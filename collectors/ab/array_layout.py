"""Where a trial's arrays land in memory, drawn afresh per trial and alike on both sides.

Identical code in two worker processes can run far apart at one point, the same in
every trial of it (docs/findings/ab-comparison.md).  The processes' heaps drift
apart (one side retakes a sample, the other does
not), so the same point's arrays sat at different offsets within a 4 KiB page on
the two sides: a store and a later load whose addresses agree in their low 12
bits wait on each other (4K aliasing), and the L1 sets in use differ.  Each trial
freed its arrays and the next allocated them in the same holes, so the trials
repeated one draw instead of sampling the layout.

So each trial of ``benchdb ab`` moves every array of the prepared state to a
fresh buffer at an offset within the page drawn from the trial's seed, the same
seed on both sides: within a trial both sides run with the same page offsets, so
the layout's effect falls on both halves of every pair, and from trial to trial
the offsets change, so the trials sample the layout (Curtsinger & Berger,
"STABILIZER: Statistically Sound Performance Evaluation", ASPLOS 2013, randomize
the layout for the same reason).  Only the state of compiled step kernels (the
built-in micro-kernels and users' plugins: a ``state`` tuple of arrays) can be
moved; a shallow model's fields and a program's arrays stay where they were
allocated.
"""

from __future__ import annotations

from typing import Any

import numpy as np

PAGE = 4096
LINE = 64


def _moved(a: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A copy of ``a`` whose first element's address modulo :data:`PAGE` is a random
    multiple of :data:`LINE`."""
    buffer = np.empty(a.nbytes + 2 * PAGE, dtype=np.uint8)
    start = buffer.ctypes.data
    target = int(rng.integers(0, PAGE // LINE)) * LINE
    offset = (target - start) % PAGE
    order = "F" if a.flags.f_contiguous and not a.flags.c_contiguous else "C"
    moved = np.ndarray(a.shape, dtype=a.dtype, buffer=buffer, offset=offset, order=order)
    moved[...] = a
    return moved


def relocate(prepared: Any, seed: int) -> bool:
    """Move the arrays of ``prepared.state`` (module docstring); whether it has one."""
    state = getattr(prepared, "state", None)
    if type(state) is not tuple:  # a model's named fields (shallow) are not a step's state
        return False
    rng = np.random.default_rng(seed)
    prepared.state = tuple(
        _moved(x, rng)
        if isinstance(x, np.ndarray) and x.ndim and (x.flags.c_contiguous or x.flags.f_contiguous)
        else x
        for x in state
    )
    return True
