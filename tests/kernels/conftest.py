"""Helpers shared by the kernel tests."""

from __future__ import annotations

import numba
import pytest
from benchdb.kernels.api import Prepared

PRECISIONS = ("float64", "float32")

needs_two_threads = pytest.mark.skipif(
    numba.config.NUMBA_NUM_THREADS < 2, reason="numba has fewer than 2 threads here"
)


def scales_linearly(
    prepared: Prepared, kernel: str, tries: int = 3, samples: int = 15
) -> list[float]:
    """Ratios min time(2R) / min time(R) of ``kernel``; the test passes if one is in [1.5, 3].

    R is chosen so one sample lasts about half a millisecond, well inside one
    scheduler time slice, so that on a loaded machine most samples still run
    unpreempted.  The R and 2R samples are interleaved and each side keeps its
    minimum: interference from other processes only ever adds time, so the
    minimum is the robust estimate on a shared, noisy machine.  Elided
    repetitions would give a ratio near 1.
    """
    once = max(prepared.run(1)[kernel], 1e-7)
    reps = max(2, int(0.0005 / once))
    ratios = []
    for _ in range(tries):
        single, double = [], []
        for _ in range(samples):
            single.append(prepared.run(reps)[kernel])
            double.append(prepared.run(2 * reps)[kernel])
        ratios.append(min(double) / min(single))
        if 1.5 <= ratios[-1] <= 3.0:
            break
    return ratios


def linear(ratios: list[float]) -> bool:
    return any(1.5 <= r <= 3.0 for r in ratios)
