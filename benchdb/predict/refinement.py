"""Where a kernel's measured curve needs more points: the gaps ``benchdb refine`` fills.

A fixed sweep places its sizes before it has seen the curve (paper 003 picks
them from the cache capacities), so a bend between two of them -- a cache
edge, a row length that breaks the layer condition, a thrashing dip -- is
interpolated across.  Where that happens shows in a leave-one-out of the two
layers a bend hides in: a square footprint left out of the curve and
interpolated by the rest (:func:`.lookup.leave_one_out`), a rectangle left out
of the row-length correction (:mod:`.aspect`) and predicted by the rest.  The
left-out span is twice the interval a query falls in, so the interpolation
error inside an interval is taken as the miss over :data:`SPAN_FACTOR` (a kink,
a cache edge, scales with the span), and it is a gap where that exceeds what
measuring the point again would move it (its repeat noise, :mod:`.noise`).
Extra-P's measurement-point advisor guesses such places from a model's
uncertainty; here they are measured.

Rule, per kernel (all of a benchmark's loops are measured at once, so the
caller takes the union over them):

* the tolerance of a left-out point is its own repeat noise, and at least the
  kernel's median noise (one point's few repeats can agree by chance);
* a **square** that misses by more bisects, in log footprint, both intervals
  around it (each new point halves a span its leave-one-out crossed);
* a **rectangle** that misses bisects the row-length correction
  (:mod:`.aspect`): along the footprint, the same aspect at the neighbouring
  square footprints (or midway to them, where they have one already), and
  along the row length, half its log aspect at its own footprint;
* no interval narrower than :data:`MIN_STEP` is bisected: a gap left there is
  a feature narrower than the sweep can resolve -- a pathological size, which
  stays flagged (:mod:`.curve`) rather than being interpolated away.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import aspect
from .lookup import Lookup, leave_one_out
from .noise import RepeatNoise, repeat_noise

MIN_STEP = 2 ** (1 / 8)
"""Smallest footprint ratio between two neighbouring measured sizes that refine makes."""

SPAN_FACTOR = 2.0
"""A left-out miss over this is the interval's own interpolation error (module docstring)."""


@dataclass(frozen=True)
class Target:
    """A size to measure: a footprint and how much longer its rows are than a square's
    (``row_factor`` scales the contiguous extent, another extent the inverse; 1 = square)."""

    footprint: float
    row_factor: float = 1.0


@dataclass(frozen=True)
class Gap:
    """A measured shape the rest of the curve misses by more than the noise."""

    kernel: str
    shape: str
    footprint: float
    log_aspect: float
    error_pct: float
    tolerance_pct: float
    flags: tuple[str, ...]
    targets: tuple[Target, ...]  # empty: nothing left to bisect

    @property
    def excess(self) -> float:
        """How many tolerances the miss is (orders the gaps, worst first)."""
        tol = self.tolerance_pct * SPAN_FACTOR
        return abs(self.error_pct) / tol if tol > 0 else math.inf

    @property
    def reason(self) -> str:
        """Why it is a gap, in one line."""
        kind = next((f for f in ("dip", "spike") if f in self.flags), None)
        what = f"{self.shape} is a {kind}" if kind else f"leaving {self.shape} out"
        return (
            f"{self.kernel}: {what}, the rest misses it by {self.error_pct:+.1f}% "
            f"(noise {self.tolerance_pct:.1f}%)"
        )


@dataclass(frozen=True)
class _Miss:
    shape: str
    footprint: float
    log_aspect: float
    error_pct: float
    noise: RepeatNoise | None
    flags: tuple[str, ...]


def _rows_by_id(lookup: Lookup) -> dict[int, Mapping[str, Any]]:
    return {int(r["measurement_id"]): r for r in lookup.selection.rows}


def _square_misses(lookup: Lookup) -> list[_Miss]:
    """Each interior footprint of the square curve left out and interpolated by the rest."""
    curve, rows = lookup.curve, _rows_by_id(lookup)
    loo = leave_one_out(lookup.method, curve)
    return [
        _Miss(
            ",".join(curve.shapes[i]),
            float(curve.footprint[i]),
            0.0,
            float(100.0 * e),
            repeat_noise([rows[m] for m in curve.measurement_ids[i]]),
            curve.flags[i],
        )
        for i, e in enumerate(loo)
        if np.isfinite(e)
    ]


def _rectangle_misses(lookup: Lookup) -> list[_Miss]:
    """Each calibration rectangle left out of the row-length correction and predicted by
    the square fit times the correction refitted from the other rectangles."""
    rect, rows = lookup.curve.rectangles, _rows_by_id(lookup)
    if len(rect) < 2:
        return []
    u = np.log(rect.footprint)
    log_ratio = np.log(rect.rate / lookup.rates(rect.footprint))
    out = []
    for j in range(len(rect)):
        keep = np.arange(len(rect)) != j
        side = np.sign(rect.log_aspect[keep]) == np.sign(rect.log_aspect[j])
        if not side.any():
            continue
        params = aspect.fit(u[keep], rect.log_aspect[keep], log_ratio[keep])
        factor, _ = aspect.evaluate(params, u[j : j + 1], rect.log_aspect[j : j + 1])
        predicted = lookup.rates(rect.footprint[j : j + 1])[0] * factor[0]
        out.append(
            _Miss(
                rect.shapes[j],
                float(rect.footprint[j]),
                float(rect.log_aspect[j]),
                float(100.0 * (rect.rate[j] / predicted - 1.0)),
                repeat_noise([rows[m] for m in rect.measurement_ids[j]]),
                (),
            )
        )
    return out


def _tolerances(misses: list[_Miss]) -> list[float]:
    """Per left-out point, its repeat noise in %, at least the kernel's median noise."""
    known = [100.0 * m.noise.rel for m in misses if m.noise is not None]
    floor = float(np.median(known)) if known else 0.0
    return [max(floor, 100.0 * m.noise.rel) if m.noise is not None else floor for m in misses]


def _neighbours(footprints: np.ndarray, fp: float) -> list[float]:
    """The measured square footprints just below and just above ``fp``."""
    below = footprints[footprints < fp / MIN_STEP**0.5]
    above = footprints[footprints > fp * MIN_STEP**0.5]
    return [float(v) for v in (below[-1:].tolist() + above[:1].tolist())]


def _midway(a: float, b: float) -> Target | None:
    """The geometric midpoint of two footprints, if they are far enough apart."""
    hi, lo = max(a, b), min(a, b)
    return Target(math.sqrt(hi * lo)) if hi / lo >= MIN_STEP**2 else None


def _square_targets(lookup: Lookup, fp: float) -> list[Target]:
    return [t for nb in _neighbours(lookup.curve.footprint, fp) if (t := _midway(fp, nb))]


def _rectangle_targets(lookup: Lookup, fp: float, a: float) -> list[Target]:
    rect = lookup.curve.rectangles
    side = np.sign(rect.log_aspect) == np.sign(a)
    measured = rect.footprint[side]
    out = []
    for nb in _neighbours(lookup.curve.footprint, fp):
        has_one = bool(np.any(np.abs(np.log(measured / nb)) < math.log(MIN_STEP) / 2))
        if not has_one:
            out.append(Target(nb, math.exp(a)))
        elif (mid := _midway(fp, nb)) is not None:
            out.append(Target(mid.footprint, math.exp(a)))
    half = a / 2
    here = rect.log_aspect[np.abs(np.log(rect.footprint / fp)) < math.log(MIN_STEP) / 2]
    if abs(half) > aspect.SQUARE_TOL and not np.any(np.abs(here - half) < aspect.SQUARE_TOL / 2):
        out.append(Target(fp, math.exp(half)))
    return out


def gaps(lookup: Lookup) -> list[Gap]:
    """The points of ``lookup`` whose interpolation error exceeds their noise, worst
    first, each with the sizes that would bisect the span it was interpolated across."""
    misses = _square_misses(lookup) + _rectangle_misses(lookup)
    out = []
    for m, tol in zip(misses, _tolerances(misses), strict=True):
        if abs(m.error_pct) / SPAN_FACTOR <= tol:
            continue
        square = abs(m.log_aspect) <= aspect.SQUARE_TOL
        targets = (
            _square_targets(lookup, m.footprint)
            if square
            else _rectangle_targets(lookup, m.footprint, m.log_aspect)
        )
        out.append(
            Gap(
                lookup.selection.kernel,
                m.shape,
                m.footprint,
                m.log_aspect,
                m.error_pct,
                tol,
                m.flags,
                tuple(targets),
            )
        )
    return sorted(out, key=lambda g: -g.excess)
