"""Helpers shared by the kernel tests."""

from __future__ import annotations

import numba
import pytest
from benchdb.kernels.api import Prepared

PRECISIONS = ("float64", "float32")

needs_two_threads = pytest.mark.skipif(
    numba.config.NUMBA_NUM_THREADS < 2, reason="numba has fewer than 2 threads here"
)


def scales_linearly(prepared: Prepared, kernel: str, tries: int = 5) -> list[float]:
    """Ratios time(2R)/time(R) of ``kernel``; the test passes if one is in [1.5, 3].

    R is chosen so one sample lasts a few milliseconds.  The band is generous
    and several tries are allowed because the machine is shared and noisy;
    elided repetitions would give a ratio near 1 every time.
    """
    once = max(prepared.run(1)[kernel], 1e-7)
    reps = max(2, int(0.004 / once))
    ratios = []
    for _ in range(tries):
        single = prepared.run(reps)[kernel]
        double = prepared.run(2 * reps)[kernel]
        ratios.append(double / single)
        if 1.5 <= ratios[-1] <= 3.0:
            break
    return ratios


def linear(ratios: list[float]) -> bool:
    return any(1.5 <= r <= 3.0 for r in ratios)
