"""Measured halo exchanges of an application, looked up by local footprint.

``benchdb app calibrate`` runs the real model (or, with ``--program``, the
user's program, whose ranks report their time in exchanges as one figure,
``exchanges``) at square global grids for every decomposition of P ranks
(:mod:`benchdb.collectors.app.exchanges` says why: packing, evicted buffers
and the wait for the neighbour are part of an exchange, and the message model
has none of them).  Here those runs are read
back: per decomposition and per ``field.axis`` exchange, the slowest rank's
seconds per exchange against the local footprint (median over the runs of one
grid, then a running median over three neighbouring grids: the first exchange
after a group of loops absorbs the neighbour's lateness, which is noise),
interpolated linearly in log-log between the calibrated grids and held at the
end values beyond them (flagged as extrapolated).  A decomposition that was
not calibrated falls back to the halo model.

The runs of one grid also give :data:`SPREAD`, the relative interquartile
range of a step's exchanges summed: the model reports it as the exchanges'
part of a prediction's spread, because a host's exchange cost can switch
between levels from one minute to the next.  And :data:`UNTIMED`: the rank's
wall time per step that neither a loop timer nor an exchange timer covers (the
calls between them, the clock reads themselves; the loop curves have the
reads' cost taken out).  The figures behind all three are in
docs/findings/app-exchanges.md.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..kernels.builtin.shallow import SHALLOW
from ..kernels.geometry import Geometry
from ..stats import summarize
from .decomposition import Decomposition

CALIBRATION_TAG = "exchange-calibration"
_PLACEMENT_TAG = re.compile(r"ppn([1-9][0-9]*)")
UNTIMED = "untimed"  # the series of the time outside the loop and exchange timers
SPREAD = "spread"  # the series of the runs' relative IQR of all exchanges of a step


@dataclass(frozen=True)
class MeasuredExchanges:
    """Per decomposition key and ``field.axis`` (a program's: ``exchanges``): (log local
    footprint under ``geometry``, log s/exchange)."""

    ranks: int
    precision: str
    series: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]]
    app_run_ids: tuple[int, ...]
    geometry: Geometry = SHALLOW

    def covers(self, decomp: Decomposition) -> bool:
        return decomp.key in self.series

    def _lookup(
        self, decomp: Decomposition, local: tuple[int, int]
    ) -> tuple[dict[str, float], bool]:
        u = float(np.log(self.geometry.footprint_bytes(local, self.precision)))
        out, outside = {}, False
        for key, (xs, ys) in self.series[decomp.key].items():
            out[key] = float(np.exp(np.interp(u, xs, ys)))
            outside |= not xs[0] <= u <= xs[-1]
        return out, outside

    def per_exchange(
        self, decomp: Decomposition, local: tuple[int, int]
    ) -> tuple[dict[str, float], bool]:
        """Seconds per exchange of every ``field.axis`` and whether it extrapolates."""
        out, outside = self._lookup(decomp, local)
        out.pop(UNTIMED)
        out.pop(SPREAD)
        return out, outside

    def spread(self, decomp: Decomposition, local: tuple[int, int]) -> float:
        """The relative IQR, over a calibrated grid's runs, of a step's exchanges."""
        return self._lookup(decomp, local)[0][SPREAD]

    def untimed(self, decomp: Decomposition, local: tuple[int, int]) -> float:
        """Seconds per step outside the loop and exchange timers."""
        return self._lookup(decomp, local)[0][UNTIMED]

    def describe(self, decomp: Decomposition) -> dict[str, Any]:
        xs = next(iter(self.series[decomp.key].values()))[0]
        return {
            "model": "measured exchanges (benchdb app calibrate)",
            "calibrated_local_footprints_bytes": [float(np.exp(xs[0])), float(np.exp(xs[-1]))],
            "calibration_app_runs": len(self.app_run_ids),
        }


def _per_step(run: dict[str, Any]) -> dict[str, float]:
    """Seconds per step of each exchange and of :data:`UNTIMED` (the slowest rank's)."""
    seconds = {**run["exchanges_s"], UNTIMED: run["untimed_s"]}
    return {k: v / run["steps"] for k, v in seconds.items()}


def placement_tag(ranks_per_node: int) -> str:
    """The tag of a calibration run that placed ``ranks_per_node`` ranks on each node."""
    return f"ppn{ranks_per_node}"


def ranks_per_node_of(run: dict[str, Any]) -> int:
    """The ranks a node of a calibration run (:func:`placement_tag`); all its ranks on one
    node where it carries no such tag."""
    for tag in run["tags"]:
        if found := _PLACEMENT_TAG.fullmatch(tag):
            return int(found.group(1))
    return int(run["ranks"])


def calibration_runs(
    runs: Sequence[dict[str, Any]], ranks: int, precision: str, ranks_per_node: int | None = None
) -> list[dict[str, Any]]:
    """The run summaries tagged :data:`CALIBRATION_TAG` with ``ranks`` ranks, placed
    ``ranks_per_node`` a node (default: all on one node).  A run across nodes exchanges
    between them: its exchanges, and its loops beside them, price only runs placed alike."""
    per_node = ranks if ranks_per_node is None else min(ranks_per_node, ranks)
    return [
        r
        for r in runs
        if CALIBRATION_TAG in r["tags"]
        and r["ranks"] == ranks
        and r["precision"] == precision
        and ranks_per_node_of(r) == per_node
    ]


def measured_exchanges(
    runs: Sequence[dict[str, Any]],
    ranks: int,
    precision: str,
    geometry: Geometry = SHALLOW,
    ranks_per_node: int | None = None,
) -> MeasuredExchanges | None:
    """The table from one application's run summaries (:func:`calibration_runs` of
    :func:`benchdb.db.app_runs.app_runs`), by local footprint under ``geometry``; None
    if there are none."""
    mine = calibration_runs(runs, ranks, precision, ranks_per_node)
    if not mine:
        return None
    by_case: dict[tuple[str, tuple[int, int]], list[dict[str, Any]]] = {}
    for r in mine:
        by_case.setdefault((r["decomposition"], tuple(r["grid"])), []).append(r)
    points: dict[str, dict[str, list[tuple[float, float]]]] = {}
    for (decomp, grid), rs in by_case.items():
        px, py = (int(v) for v in decomp.split("x"))
        local = Decomposition(px, py).local_shape(grid)
        u = float(np.log(geometry.footprint_bytes(local, precision)))
        per_step = [_per_step(r) for r in rs]
        per_case = {k: statistics.median(p[k] for p in per_step) for k in per_step[0]}
        totals = summarize([sum(v for k, v in p.items() if k != UNTIMED) for p in per_step])
        per_case[SPREAD] = totals.t_iqr / totals.t_median if totals.t_median > 0 else 0.0
        for key, per in per_case.items():
            points.setdefault(decomp, {}).setdefault(key, []).append((u, np.log(max(per, 1e-12))))
    from scipy.ndimage import median_filter

    series = {
        decomp: {
            key: (
                np.array([p[0] for p in pts]),
                median_filter(np.array([p[1] for p in pts]), size=3, mode="nearest"),
            )
            for key, pts in ((k, sorted(v)) for k, v in keys.items())
        }
        for decomp, keys in points.items()
    }
    return MeasuredExchanges(
        ranks, precision, series, tuple(r["app_run_id"] for r in mine), geometry
    )
