"""A block's exact row length: the row-residue correction of a lookup.

Paper 003 looks P up by footprint alone (eq. 8-9), and :mod:`.aspect` corrects
for a block's row length smoothly.  Neither sees the row length *modulo a cache
line*: a row that is a whole number of SIMD vectors runs no scalar remainder,
and rows that start on a cache line load no line twice.  Two blocks one element
apart in row length can differ by more than the repeat noise, and a lookup
that interpolates between measured sizes misses that by as much, however
densely it is measured (docs/findings/prediction-accuracy.md).  The effect
depends on the loop and on the cache level the block sits in, so it is
measured, not modelled.

The sweep measures at some square footprints a *residue set*: the square and
``W - 1`` siblings with rows 1, 2, ... ``W - 1`` elements longer, ``W`` the cache
line in elements (:func:`collectors.sizes.residue_shapes`).  Per set, the log
rates less the square curve's through the other squares (the footprint grows
with the row) give the deviation ``d_j(r)`` of each residue ``r = extent mod W``;
the residues' deviations have mean zero.  Between the sets' footprints ``d(u, r)``
is interpolated linearly in log footprint ``u`` and held beyond the outermost,
after a running median of three along the footprint (as the row-length levels
of :mod:`.aspect`: one disturbed set does not speak alone).  Every measured
rate is divided by ``exp(d(u, r))`` before the curve and the row-length
correction are fitted, and every answer but a same-row one (whose points share
the query's row length) is multiplied by ``exp(d(u_q, r_q))``:

    P(shape) = P_square(u) * exp(r_aspect(u, a)) * exp(d(u, extent mod W)).

Only a set's square joins the curve; its siblings calibrate the correction
alone, as the rectangles calibrate :mod:`.aspect`.  Without sets the factor is 1
and every number is as before.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..kernels.geometry import Geometry
from .aspect import SQUARE_TOL, log_aspect

MIN_WIDTH = 4
"""The fewest consecutive row extents that make a set (a cache line holds at least
4 double-precision elements)."""

FORM = "residue-sets"
"""In the hash of every fit whose curve has residue sets: a change of the
correction's form refits them, while curves without sets keep their stored fits."""


@dataclass(frozen=True)
class ResidueSets:
    """The measured residue sets of one kernel's selection (see the module docstring)."""

    axis: int | None
    width: int  # W; 0 where there is no set
    footprint: np.ndarray  # (k,) bytes of each set's square, ascending
    deviation: np.ndarray  # (k, W) ln-rate deviation of each residue, mean zero per set
    squares: tuple[str, ...]  # each set's square, by shape key
    siblings: frozenset[str]  # the other members' shape keys: kept out of the curve

    def __len__(self) -> int:
        return len(self.footprint)

    def log_factor(self, log_footprint: np.ndarray, extent: np.ndarray) -> np.ndarray:
        """``d(u, extent mod W)`` at each query (0 without sets)."""
        if not len(self):
            return np.zeros(len(log_footprint))
        smooth = self.smoothed()
        u = np.log(self.footprint)
        table = np.array([np.interp(log_footprint, u, smooth[:, r]) for r in range(self.width)])
        residue = np.asarray(extent, dtype=np.int64) % self.width
        return table[residue, np.arange(len(residue))]

    def smoothed(self) -> np.ndarray:
        """The sets' deviations after the running median along the footprint, re-centred."""
        if len(self) < 3:
            return self.deviation
        d = self.deviation  # numpy alone: scipy's import would double `predict`'s cold start
        padded = np.vstack([d[:1], d, d[-1:]])
        out = np.median(np.stack([padded[:-2], padded[1:-1], padded[2:]]), axis=0)
        return out - out.mean(axis=1, keepdims=True)

    def normalise(self, rows: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
        """``rows`` without the siblings, each time multiplied by ``exp(d)`` at its
        footprint and row extent: the rates as if every row length ran at the mean of
        its residues."""
        if not len(self):
            return list(rows)
        kept = [r for r in rows if str(r["shape_key"]) not in self.siblings]
        u = np.log([float(r["footprint_bytes"]) for r in kept])
        extent = np.array([int(r["shape"][self.axis]) for r in kept])
        scale = np.exp(self.log_factor(u, extent))
        return [_scaled(r, s) for r, s in zip(kept, scale, strict=True)]

    def fingerprint_data(self) -> dict[str, Any]:
        """What a fit built on these sets depends on (empty without sets)."""
        if not len(self):
            return {}
        return {
            "form": FORM,
            "width": self.width,
            "footprint": self.footprint.tolist(),
            "deviation": self.deviation.tolist(),
        }

    def describe(self) -> dict[str, Any]:
        """For ``--json``: the sets' squares, footprints and deviations (fractions)."""
        return {
            "width": self.width,
            "sets": [
                {"square": s, "footprint_bytes": float(f), "rate_deviation": np.expm1(d).tolist()}
                for s, f, d in zip(self.squares, self.footprint, self.deviation, strict=True)
            ],
        }


NO_RESIDUES = ResidueSets(None, 0, np.zeros(0), np.zeros((0, 0)), (), frozenset())


def _scaled(row: Mapping[str, Any], scale: float) -> Mapping[str, Any]:
    if scale == 1.0:
        return row
    samples = row["samples"]
    return {
        **row,
        "t_median": float(row["t_median"]) * scale,
        "samples": None if samples is None else [float(t) * scale for t in samples],
    }


def find_sets(
    rows: Sequence[Mapping[str, Any]], geometry: Geometry | None, work_per_point: float
) -> ResidueSets:
    """The residue sets among ``rows`` (measurement rows: ``shape``, ``shape_key``,
    ``points``, ``t_median``, ``footprint_bytes``): blocks alike but in their
    contiguous extent, whose extents are ``W`` consecutive integers, ``W`` the most
    common such run (at least :data:`MIN_WIDTH`); runs of another length are left
    alone.  Repeated measurements of one shape count by their median rate.

    A set's trend is that of the square curve through the *other* squares (log rate
    interpolated linearly in log footprint), not a line fitted to the set: over one
    period a fitted line would absorb part of the pattern itself, and differently for
    every residue the set starts at.  Where fewer than two other squares are
    measured there is nothing to detrend by, and no set."""
    axis = None if geometry is None or geometry.ndim < 2 else geometry.contiguous_axis
    if axis is None or not rows:
        return NO_RESIDUES
    axis %= geometry.ndim
    rates: dict[str, list[float]] = {}
    shape_of: dict[str, tuple[int, ...]] = {}
    footprint: dict[str, float] = {}
    for r in rows:
        key = str(r["shape_key"])
        rates.setdefault(key, []).append(work_per_point * float(r["points"]) / r["t_median"])
        shape_of[key] = tuple(int(n) for n in r["shape"])
        footprint[key] = float(r["footprint_bytes"])
    groups: dict[tuple[int, ...], dict[int, str]] = {}
    for key, shape in shape_of.items():
        others = shape[:axis] + shape[axis + 1 :]
        groups.setdefault(others, {})[shape[axis]] = key
    runs = [run for group in groups.values() for run in _runs(group)]
    widths = Counter(len(run) for run in runs)
    if not widths:
        return NO_RESIDUES
    width = max(widths, key=lambda w: (widths[w], w))
    sets = sorted((r for r in runs if len(r) == width), key=lambda run: footprint[run[0][1]])
    members = {k for run in sets for _, k in run}
    keys = [k for k in shape_of if k not in members]
    square = np.abs(log_aspect(geometry, np.array([shape_of[k] for k in keys]))) <= SQUARE_TOL
    curve: dict[float, list[float]] = {}
    for k in (k for k, sq in zip(keys, square, strict=True) if sq):
        curve.setdefault(np.log(footprint[k]), []).extend(rates[k])
    if len(curve) < 2:
        return NO_RESIDUES
    u_curve = np.array(sorted(curve))
    y_curve = np.log([float(np.median(curve[u])) for u in u_curve])
    deviation = np.zeros((len(sets), width))
    for j, run in enumerate(sets):
        extent = np.array([e for e, _ in run], dtype=np.int64)
        u = np.log([footprint[k] for _, k in run])
        y = np.log([float(np.median(rates[k])) for _, k in run])
        residual = y - np.interp(u, u_curve, y_curve)
        deviation[j, extent % width] = residual - residual.mean()
    return ResidueSets(
        axis,
        width,
        np.array([footprint[run[0][1]] for run in sets]),
        deviation,
        tuple(run[0][1] for run in sets),
        frozenset(k for run in sets for _, k in run[1:]),
    )


def _runs(group: Mapping[int, str]) -> list[list[tuple[int, str]]]:
    """The maximal runs of consecutive extents in ``group`` (extent -> shape key) of at
    least :data:`MIN_WIDTH`, each as (extent, key) pairs ascending."""
    out: list[list[tuple[int, str]]] = []
    run: list[tuple[int, str]] = []
    for extent in sorted(group):
        if run and extent != run[-1][0] + 1:
            out.append(run)
            run = []
        run.append((extent, group[extent]))
    out.append(run)
    return [r for r in out if len(r) >= MIN_WIDTH]
