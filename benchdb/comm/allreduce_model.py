"""Global reductions: measured per rank count, or ``2·log2(P)`` point-to-point times.

Kerbyson & Jones (paper 001, section 3.2 and 4.1) either measure the global
sum for each processor count (Blue Gene/L) or model it as a binary-tree
reduction followed by a broadcast: ``2·log2(P)`` stages, each one message
latency (AlphaServer).  Here a measured time is used when the rank count was
measured (interpolated in log(bytes) between measured sizes), otherwise the
tree model with the point-to-point time of the message.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


def tree_stages(ranks: int) -> int:
    """Stages of a binary-tree reduce + broadcast: ``2·⌈log2 P⌉``."""
    return 2 * math.ceil(math.log2(ranks)) if ranks > 1 else 0


@dataclass(frozen=True)
class AllreduceModel:
    """Measured ``(ranks, bytes, seconds)`` points (medians)."""

    measured: tuple[tuple[int, int, float], ...]

    def time(
        self, ranks: int, nbytes: int, p2p: Callable[[float], float]
    ) -> tuple[float, str, bool]:
        """(seconds, method, extrapolated) for an allreduce of ``nbytes`` over ``ranks``."""
        points = sorted((b, t) for r, b, t in self.measured if r == ranks)
        if points:
            sizes = np.log([b for b, _ in points])
            times = [t for _, t in points]
            x = math.log(max(nbytes, 1))
            extrapolated = x < sizes[0] or x > sizes[-1]
            return float(np.interp(x, sizes, times)), "measured", extrapolated
        return tree_time(ranks, nbytes, p2p), "2*log2(P)*p2p", False


def tree_time(ranks: int, nbytes: int, p2p: Callable[[float], float]) -> float:
    """Paper 001: reduction then broadcast, ``log2 P`` stages each."""
    return tree_stages(ranks) * p2p(nbytes)
