"""How much slower a program's loops run inside its own parallel run than its curves say.

A user's program is swept in its sweep mode (``benchdb collect --program``, and with
P copies at once ``benchdb app calibrate --program --ranks P``): there its loops run
back to back, one phase after the other.  In a whole run on P ranks they run between
halo exchanges: the MPI library's code and buffers pass through the core's caches
and predictors between two loops, and the clock reads around every phase are part of
the run.  The built-in model's curves time its loops inside a stepping process
(context ``fullstep``, :mod:`.context`); a program's cannot.

Its exchange calibration (:mod:`.exchange_table`) runs the program itself at square
grids for every decomposition of P ranks, and each rank reports its time in the
loops as well as in the exchanges.  So the ratio of those in-run loops to what the
curves say for the same local block is measured, per decomposition, at every
calibrated local footprint; a prediction's loops are multiplied by it, looked up by
local footprint as the measured exchanges are (a running median of three
neighbouring grids, linear in log footprint between them, held at the end values
beyond).  With the exchanges and the loops of one rank both from the same runs, the
prediction at a calibrated grid is that grid's measured run, whatever the split
between the two.  The figures behind it are in docs/findings/user-mpi-programs.md.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..kernels.geometry import Geometry
from .decomposition import Decomposition
from .exchange_table import calibration_runs


@dataclass(frozen=True)
class CalibratedLoops:
    """One calibrated grid and decomposition: its median in-run loops per step."""

    grid: tuple[int, int]
    decomp: Decomposition
    steps: int
    loops_per_step_s: float


def calibrated_loops(
    runs: Sequence[dict[str, Any]], ranks: int, precision: str, ranks_per_node: int | None = None
) -> list[CalibratedLoops]:
    """The exchange calibration's runs (:func:`~.exchange_table.calibration_runs` of
    :func:`benchdb.db.app_runs.app_runs` summaries) with ``ranks`` ranks, ``ranks_per_node``
    a node, per grid and decomposition: the median over its runs of the slowest rank's
    loops per step."""
    by_case: dict[tuple[str, tuple[int, int], int], list[float]] = {}
    for r in calibration_runs(runs, ranks, precision, ranks_per_node):
        key = (r["decomposition"], tuple(r["grid"]), r["steps"])
        by_case.setdefault(key, []).append(sum(r["loops_s"].values()) / r["steps"])
    out = []
    for (decomp, grid, steps), per_step in sorted(by_case.items()):
        px, py = (int(v) for v in decomp.split("x"))
        out.append(CalibratedLoops(grid, Decomposition(px, py), steps, statistics.median(per_step)))
    return out


@dataclass(frozen=True)
class InRunLoops:
    """Per decomposition key: (log local footprint under ``geometry``, log of the in-run
    loops over the curves' loops), smoothed, ascending in footprint."""

    series: dict[str, tuple[np.ndarray, np.ndarray]]
    geometry: Geometry
    precision: str

    def covers(self, decomp: Decomposition) -> bool:
        return decomp.key in self.series

    def factor(self, decomp: Decomposition, local: tuple[int, int]) -> float:
        """What a run's loops on this decomposition's ``local`` block take over what the
        curves say (1 where the decomposition was not calibrated)."""
        if not self.covers(decomp):
            return 1.0
        xs, ys = self.series[decomp.key]
        u = float(np.log(self.geometry.footprint_bytes(local, self.precision)))
        return float(np.exp(np.interp(u, xs, ys)))


def in_run_loops(
    calibrated: Sequence[CalibratedLoops],
    curve_loops_per_step_s: Sequence[float],
    geometry: Geometry,
    precision: str,
) -> InRunLoops:
    """The table from the calibrated grids and what the curves say for each of their
    blocks (seconds per step, in the same order)."""
    from scipy.ndimage import median_filter

    points: dict[str, list[tuple[float, float]]] = {}
    for cal, curve in zip(calibrated, curve_loops_per_step_s, strict=True):
        local = cal.decomp.local_shape(cal.grid)
        u = float(np.log(geometry.footprint_bytes(local, precision)))
        ratio = float(np.log(cal.loops_per_step_s / curve))
        points.setdefault(cal.decomp.key, []).append((u, ratio))
    series = {}
    for key, pts in points.items():
        pts.sort()
        xs = np.array([p[0] for p in pts])
        ys = median_filter(np.array([p[1] for p in pts]), size=3, mode="nearest")
        series[key] = (xs, ys)
    return InRunLoops(series, geometry, precision)
