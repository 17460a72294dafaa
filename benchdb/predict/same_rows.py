"""Answers from measured blocks with the query's own rows, where two bracket it closely.

Paper 003 looks P up by footprint alone (eq. 8-9), and :mod:`.aspect` corrects
for a block's row length with one smooth slope per footprint.  Neither sees
what the exact row length does: its SIMD remainder and whether each row starts
on a cache line.  A block whose rows are a whole number of cache lines can run
well faster than its footprint neighbours, and a square-curve lookup resting on
it then misses a block of other rows by more than the noise
(docs/findings/lookup-layers.md).

So where the measurements hold blocks with exactly the query's contiguous
extent on both sides of its footprint, each within :data:`REACH`, the answer
interpolates between the nearest two of them -- linearly in log footprint, as
:mod:`.methods.linear` does; over a span this short every method would --
instead of the curve.  ``benchdb app calibrate --near`` measures such
brackets for every block of a run.  A block measured itself is its own answer.
Anywhere else the curve and the row-length correction answer as before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .curve import Curve, build_curve

REACH = 2**0.25
"""Farthest footprint ratio between the query and a same-row point it rests on
(+-19 %): twice the near calibration's bracket (``NEAR_FACTOR``), well inside
the sweep's half-octave spacing, so only deliberate neighbours qualify."""


@dataclass(frozen=True)
class Answers:
    """Per query: whether same-row points answer it and, where they do, from what."""

    found: np.ndarray  # bool
    rate: np.ndarray
    spread: np.ndarray  # relative IQR, propagated as in the lookup
    lo_footprint: np.ndarray
    hi_footprint: np.ndarray
    flags: np.ndarray  # object: the bracketing points' flags, comma-joined


@dataclass(frozen=True)
class SameRowCurves:
    """One measured curve per contiguous extent (squares and rectangles alike)."""

    axis: int
    curves: Mapping[int, Curve]

    @classmethod
    def build(
        cls,
        rows: Sequence[Mapping[str, Any]],
        work_per_point: float,
        axis: int | None,
        curve: Curve,
    ) -> SameRowCurves | None:
        """Group ``rows`` by their extent along ``axis``; None where there is no such axis.

        A point keeps the ``spike``/``dip`` flags its measurements earned on ``curve``
        (the footprint curve, where they have neighbours to stick out from)."""
        if axis is None or not rows:
            return None
        earned = {
            m: f for mids, f in zip(curve.measurement_ids, curve.flags, strict=True) for m in mids
        }
        groups: dict[int, list[Mapping[str, Any]]] = {}
        for row in rows:
            groups.setdefault(int(row["shape"][axis]), []).append(row)
        curves = {}
        for extent, group in groups.items():
            own = build_curve(group, work_per_point)
            flags = tuple(
                tuple(sorted(set(f).union(*(earned.get(m, ()) for m in mids))))
                for mids, f in zip(own.measurement_ids, own.flags, strict=True)
            )
            curves[extent] = replace(own, flags=flags)
        return cls(axis, curves)

    def without(self, removed: Sequence[Mapping[str, Any]]) -> SameRowCurves:
        """These curves with the measurement rows ``removed`` taken out: only their
        extents' curves change (validation's leave-one-out refits a lookup once per
        shape; rebuilding every extent's curve each time cost most of it).  The
        points keep the flags they earned on the full curve."""
        ids = {int(r["measurement_id"]) for r in removed}
        curves = dict(self.curves)
        for extent in {int(r["shape"][self.axis]) for r in removed}:
            curve = curves.get(extent)
            if curve is None:
                continue
            hit = [i for i, mids in enumerate(curve.measurement_ids) if ids.intersection(mids)]
            for i in reversed(hit):
                curve = curve.drop(i)
            if len(curve):
                curves[extent] = curve
            else:
                del curves[extent]
        return SameRowCurves(self.axis, curves)

    def answer(self, shapes: np.ndarray, footprint: np.ndarray) -> Answers:
        """For each row of ``shapes`` (n, ndim) with ``footprint`` (bytes): the rate
        between the nearest measured blocks of its rows on either side, where both
        lie within :data:`REACH`; ``found`` is False elsewhere."""
        n = len(shapes)
        out = Answers(
            np.zeros(n, dtype=bool),
            np.full(n, np.nan),
            np.full(n, np.nan),
            np.full(n, np.nan),
            np.full(n, np.nan),
            np.full(n, "", dtype=object),
        )
        for i, (extent, fp) in enumerate(zip(shapes[:, self.axis], footprint, strict=True)):
            curve = self.curves.get(int(extent))
            if curve is None:
                continue
            hi = int(np.searchsorted(curve.footprint, fp, side="left"))
            if hi == len(curve):
                continue
            lo = hi if curve.footprint[hi] == fp else hi - 1
            if lo < 0 or fp / curve.footprint[lo] > REACH or curve.footprint[hi] / fp > REACH:
                continue
            span = np.log(curve.footprint[hi] / curve.footprint[lo])
            w = float(np.log(fp / curve.footprint[lo]) / span) if span > 0 else 0.0
            out.found[i] = True
            out.rate[i] = (1 - w) * curve.rate[lo] + w * curve.rate[hi]
            out.spread[i] = np.hypot((1 - w) * curve.spread[lo], w * curve.spread[hi])
            out.lo_footprint[i], out.hi_footprint[i] = curve.footprint[lo], curve.footprint[hi]
            out.flags[i] = ",".join(sorted(set(curve.flags[lo]) | set(curve.flags[hi])))
        return out
