"""The measured performance curve P(footprint) of one kernel: what every method fits.

Combining runs (paper 003 eq. 9 looks P up by footprint only): all valid
measurements with the same footprint -- repeated runs, and shapes such as
100x400 and 400x100 that share a footprint -- become one point whose rate is
the *median of the per-measurement median rates* (robust to one disturbed run)
and whose spread is the relative interquartile range of *all* their samples
pooled, so disagreement between runs widens the uncertainty instead of
vanishing in an average.

Rectangles (a block's rows much longer or shorter than a square's, see
:mod:`.aspect`) do not join the curve: they are kept beside it, one entry per
shape, and calibrate the row-length correction.  A kernel measured in
rectangles only (fewer than two square footprints) keeps them all in the
curve, as a footprint lookup would.

Pathological points stay in the curve, flagged (paper 003 §V saw "pathological
peaks and troughs" from cache thrashing): ``noisy`` comes from the collector
(CV above threshold); ``spike``/``dip`` mark a point above (below) *both*
neighbours by more than :data:`PATHOLOGY_REL` -- a monotone cache step is never
flagged, an isolated excursion is -- where that cannot be noise: the point's
rate is beyond that margin plus three times its spread, or *every* one of its
independent repeats (passes, runs: :func:`.noise.pass_medians`, two at least)
lies beyond the margin.  The second test is what finds a thrashing dip, whose
own samples scatter widely (conflict misses come and go) while each pass still
runs well below its neighbours.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..kernels.geometry import Geometry
from ..validity import sample_count, samples_pruned
from . import aspect
from .noise import pass_medians

DERIVED_FLAGS = ("spike", "dip")
"""Flags :func:`build_curve` derives from the points; the others come from the collector."""

PATHOLOGY_REL = 0.10
"""A point more than 10 % above/below both neighbours is a spike/dip (and 3x its spread)."""


@dataclass(frozen=True)
class Rectangles:
    """Calibration rectangles beside a curve, one entry per shape (see :mod:`.aspect`)."""

    footprint: np.ndarray
    log_aspect: np.ndarray
    rate: np.ndarray
    shapes: tuple[str, ...]
    measurement_ids: tuple[tuple[int, ...], ...]

    def __len__(self) -> int:
        return len(self.footprint)

    def fingerprint_data(self) -> dict[str, Any]:
        """With rectangles, also the form of the correction fitted to them
        (:data:`.aspect.FORM`): a fit stored in an earlier form is redone, while the
        fits of curves without rectangles stay."""
        data = {
            "footprint": self.footprint.tolist(),
            "log_aspect": self.log_aspect.tolist(),
            "rate": self.rate.tolist(),
            "measurements": [list(m) for m in self.measurement_ids],
        }
        return {**data, "form": aspect.FORM} if len(self) else data


NO_RECTANGLES = Rectangles(np.zeros(0), np.zeros(0), np.zeros(0), (), ())


@dataclass(frozen=True)
class Curve:
    """Measured points sorted by footprint; rates in the kernel's unit (flop/s, B/s...)."""

    footprint: np.ndarray
    rate: np.ndarray
    spread: np.ndarray  # relative IQR of the pooled samples at each point
    n_samples: np.ndarray
    shapes: tuple[tuple[str, ...], ...]
    flags: tuple[tuple[str, ...], ...]
    measurement_ids: tuple[tuple[int, ...], ...]
    run_ids: tuple[int, ...] = field(default=())
    rectangles: Rectangles = NO_RECTANGLES
    # slowest and fastest rate among each point's independent repeats (NaN: one only)
    repeat_low: np.ndarray | None = None
    repeat_high: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.footprint)

    @property
    def log_x(self) -> np.ndarray:
        return np.log(self.footprint)

    def drop(self, index: int) -> Curve:
        """The curve without point ``index`` (leave-one-out cross-validation)."""
        keep = np.arange(len(self)) != index

        def without(items: tuple) -> tuple:
            return items[:index] + items[index + 1 :]

        return replace(
            self,
            footprint=self.footprint[keep],
            rate=self.rate[keep],
            spread=self.spread[keep],
            n_samples=self.n_samples[keep],
            shapes=without(self.shapes),
            flags=without(self.flags),
            measurement_ids=without(self.measurement_ids),
            repeat_low=None if self.repeat_low is None else self.repeat_low[keep],
            repeat_high=None if self.repeat_high is None else self.repeat_high[keep],
        )

    def fingerprint_data(self) -> dict[str, Any]:
        """What the fitted models depend on, for :func:`benchdb.hashing.content_hash`; the
        flags derived here are left out, being a function of the rest (a new rule for
        them must not discard the fits stored before it)."""
        return {
            "footprint": self.footprint.tolist(),
            "rate": self.rate.tolist(),
            "spread": self.spread.tolist(),
            "flags": [[x for x in f if x not in DERIVED_FLAGS] for f in self.flags],
            "measurements": [list(m) for m in self.measurement_ids],
            "rectangles": self.rectangles.fingerprint_data(),
        }

    def points_table(self) -> list[dict[str, Any]]:
        """One dict per measured point (for JSON output and plots)."""
        return [
            {
                "footprint_bytes": float(self.footprint[i]),
                "rate": float(self.rate[i]),
                "spread_rel": float(self.spread[i]),
                "samples": int(self.n_samples[i]),
                "shapes": list(self.shapes[i]),
                "flags": list(self.flags[i]),
            }
            for i in range(len(self))
        ]


def _rel_iqr(values: np.ndarray) -> float:
    q1, med, q3 = np.percentile(values, [25, 50, 75])
    return float((q3 - q1) / med) if med > 0 else 0.0


def _pooled_spread(stored: list[tuple[float, np.ndarray]]) -> float:
    """The relative IQR of the rates of every stored sample (work / time).  A sample a
    program's timer read as zero (a loop shorter than a clock read) has no finite rate:
    where one is present, the spread is that of the times per unit of work instead."""
    times = np.concatenate([t for _, t in stored])
    if (times > 0).all():
        return _rel_iqr(np.concatenate([w / t for w, t in stored]))
    return _rel_iqr(np.concatenate([t / w for w, t in stored]))


def _stated_spread(members: Iterable[Mapping[str, Any]]) -> float:
    """The median of the members' own relative IQR, from their statistics alone."""
    return float(np.median([m["t_iqr"] / m["t_median"] for m in members]))


def median_rate(members: Iterable[Mapping[str, Any]], work_per_point: float) -> float:
    """The median of the members' own (median-time) rates: how a curve point combines
    its measurements (``statistics``: numpy's median costs more on a few values)."""
    return float(
        statistics.median(work_per_point * float(m["points"]) / m["t_median"] for m in members)
    )


def _split_rectangles(
    rows: list[Mapping[str, Any]], geometry: Geometry | None
) -> tuple[list[Mapping[str, Any]], list[tuple[float, Mapping[str, Any]]]]:
    """(square rows, [(log aspect, row)] of the rectangles); all square where the
    geometry has no contiguous axis or fewer than two square footprints remain."""
    if geometry is None or geometry.contiguous_axis is None or not rows:
        return rows, []
    a = aspect.log_aspect(geometry, np.array([list(r["shape"]) for r in rows]))
    square = [r for r, ai in zip(rows, a, strict=True) if abs(ai) <= aspect.SQUARE_TOL]
    if len({int(r["footprint_bytes"]) for r in square}) < 2:
        return rows, []
    rects = [(float(ai), r) for r, ai in zip(rows, a, strict=True) if abs(ai) > aspect.SQUARE_TOL]
    return square, rects


def _rectangles(rects: list[tuple[float, Mapping[str, Any]]], work_per_point: float) -> Rectangles:
    groups: dict[str, list[tuple[float, Mapping[str, Any]]]] = {}
    for a, row in rects:
        groups.setdefault(str(row["shape_key"]), []).append((a, row))
    keys = sorted(groups, key=lambda k: (groups[k][0][1]["footprint_bytes"], k))
    return Rectangles(
        np.array([float(groups[k][0][1]["footprint_bytes"]) for k in keys]),
        np.array([groups[k][0][0] for k in keys]),
        np.array([median_rate((r for _, r in groups[k]), work_per_point) for k in keys]),
        tuple(keys),
        tuple(tuple(int(r["measurement_id"]) for _, r in groups[k]) for k in keys),
    )


@dataclass(frozen=True)
class CurvePoint:
    """The measurements of one footprint combined (see the module docstring)."""

    rate: float
    spread: float
    n_samples: int
    shapes: tuple[str, ...]
    flags: tuple[str, ...]
    measurement_ids: tuple[int, ...]
    repeat_low: float
    repeat_high: float
    run_ids: frozenset[int]


PointMemo = dict[tuple[float, tuple[int, ...]], CurvePoint]
"""Curve points by (work per point, measurement ids): a leave-one-out rebuilds the
curve once per held-out shape, and all but the held-out footprints recur."""


def curve_point(members: list[Mapping[str, Any]], work_per_point: float) -> CurvePoint:
    """Combine the measurement rows of one footprint.

    Members whose samples were pruned (:func:`benchdb.validity.samples_pruned`) count
    with their median rate and their sample count; the spread pools the samples still
    stored, and where none are, it is the members' own relative IQR (``t_iqr /
    t_median``)."""
    work = [work_per_point * float(m["points"]) for m in members]
    stored = [(w, np.asarray(m["samples"], dtype=float)) for w, m in zip(work, members, strict=True)
              if not samples_pruned(m) and m["samples"]]  # fmt: skip
    repeats = [w / t for w, m in zip(work, members, strict=True) for t in pass_medians(m) if t > 0]
    return CurvePoint(
        rate=median_rate(members, work_per_point),
        spread=_pooled_spread(stored) if stored else _stated_spread(members),
        n_samples=sum(sample_count(m) for m in members),
        shapes=tuple(sorted({str(m["shape_key"]) for m in members})),
        flags=tuple(sorted({str(f) for m in members for f in (m["flags"] or [])})),
        measurement_ids=tuple(int(m["measurement_id"]) for m in members),
        repeat_low=min(repeats) if len(repeats) > 1 else np.nan,
        repeat_high=max(repeats) if len(repeats) > 1 else np.nan,
        run_ids=frozenset(int(m["run_id"]) for m in members),
    )


def build_curve(
    rows: Iterable[Mapping[str, Any]],
    work_per_point: float,
    geometry: Geometry | None = None,
    memo: PointMemo | None = None,
) -> Curve:
    """Combine measurement rows (``footprint_bytes, points, t_median, samples, flags,
    shape, shape_key, measurement_id, run_id``) into one curve point per footprint,
    with the rectangles of ``geometry`` (if given) set aside.  ``memo`` keeps the
    points combined for the next build from some of the same rows."""
    square, rects = _split_rectangles(list(rows), geometry)
    groups: dict[int, list[Mapping[str, Any]]] = {}
    for row in square:
        groups.setdefault(int(row["footprint_bytes"]), []).append(row)
    fps = sorted(groups)
    memo = {} if memo is None else memo
    points = []
    for fp in fps:
        key = (work_per_point, tuple(int(m["measurement_id"]) for m in groups[fp]))
        if key not in memo:
            memo[key] = curve_point(groups[fp], work_per_point)
        points.append(memo[key])
    runs = {int(r["run_id"]) for _, r in rects}.union(*(p.run_ids for p in points))
    curve = Curve(
        np.asarray(fps, dtype=float),
        np.asarray([p.rate for p in points], dtype=float),
        np.asarray([p.spread for p in points], dtype=float),
        np.asarray([p.n_samples for p in points], dtype=int),
        tuple(p.shapes for p in points),
        tuple(p.flags for p in points),
        tuple(p.measurement_ids for p in points),
        tuple(sorted(runs)),
        _rectangles(rects, work_per_point),
        np.asarray([p.repeat_low for p in points], dtype=float),
        np.asarray([p.repeat_high for p in points], dtype=float),
    )
    return _flag_pathologies(curve)


def _flag_pathologies(curve: Curve) -> Curve:
    """Add ``spike``/``dip`` to interior points that stick out from both neighbours
    beyond noise (see the module docstring)."""
    y, s = curve.rate, curve.spread
    n = len(y)
    low = curve.repeat_low if curve.repeat_low is not None else np.full(n, np.nan)
    high = curve.repeat_high if curve.repeat_high is not None else np.full(n, np.nan)
    flags = [list(f) for f in curve.flags]
    for i in range(1, n - 1):
        margin = max(PATHOLOGY_REL, 3.0 * float(s[i]))
        lo, hi = min(y[i - 1], y[i + 1]), max(y[i - 1], y[i + 1])
        if y[i] > hi * (1 + margin) or low[i] > hi * (1 + PATHOLOGY_REL):
            flags[i].append("spike")
        elif y[i] < lo * (1 - margin) or high[i] < lo * (1 - PATHOLOGY_REL):
            flags[i].append("dip")
    return replace(curve, flags=tuple(tuple(f) for f in flags))
