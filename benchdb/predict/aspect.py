"""A block's shape beyond its footprint: the row-length correction of a lookup.

Paper 003 looks P up by footprint alone (eq. 8-9).  Blocks of one footprint
but different row lengths (the extent along the contiguous axis, see
:class:`benchdb.kernels.geometry.Geometry`) run at different rates: short rows
pay the loop's per-row start-up and remainder more often, and long rows can
break the *layer condition* of Kerncraft (Hammer et al.) -- the neighbouring
rows a stencil reuses no longer fit in L1/L2.  The two effects have opposite
signs, act in different footprint ranges and grow unevenly with the aspect, so
no fixed law would do (docs/findings/lookup-layers.md): the correction is
fitted from measured rectangles.

The sweep measures, at every other footprint, rectangles whose rows are 2, 4
and 8 times longer and shorter than the square's
(:data:`collectors.sizes.ASPECT_FACTORS`).  With the log aspect
``a = ln(contiguous extent / geometric mean of the extents)`` (0 for a square),
each rectangle gives a slope

    s = ln(P_rect / P_square(footprint)) / |a|

with ``P_square`` the method's fit of the square curve at the rectangle's
footprint.  Per side (``a < 0`` shorter rows, ``a > 0`` longer), rectangles of
about one |a| (within half of :data:`LEVEL_STEP`) form a *level*; a level's
slope is interpolated linearly in log footprint between its rectangles'
footprints and held constant beyond them, and gives ``r = s * A`` at the
level's aspect ``A``.  At a query's footprint the levels measured there (within
:data:`LEVEL_REACH`) and the square (``r = 0`` at ``a = 0``) are interpolated
linearly in ``a``; the prediction is

    P(footprint, a) = P_square(footprint) * exp(r(footprint, a)).

With one level this is the earlier single slope, log-linear in the aspect up
to the measured rectangle.  Beyond the largest level measured there the
correction is held at its value, and the answer says ``aspect_extrapolated``
(so does any non-square shape of a kernel measured in squares only: its
correction is 1).
"""

from __future__ import annotations

import math
import statistics
from typing import Any

import numpy as np

from ..kernels.geometry import Geometry

SQUARE_TOL = 0.1
"""|log aspect| up to this (rows within about 10 % of the square's) counts as square."""

SIDES = {"short": -1.0, "long": 1.0}

FORM = "levels"
"""The form of the fitted parameters; in the hash of every fit with rectangles, so that a
fit stored in an earlier form (one slope per footprint) is redone."""

LEVEL_STEP = math.log(2) / 2
"""Rectangles whose |log aspect| rounds to one multiple of this form one level: the
sweep's factors 2, 4, 8 fall on every other multiple, and refine's halved aspects
between them."""

LEVEL_REACH = math.log(2) / 2
"""How far (log footprint) beyond its outermost rectangles a level still answers: half
the sweep's spacing of rectangles (an octave), so that a level measured at a few
footprints only does not speak for the whole range."""


def log_aspect(geometry: Geometry, shapes: np.ndarray) -> np.ndarray:
    """``ln(contiguous extent / geometric mean extent)`` of each row of ``shapes`` (n, ndim).

    Zero where the geometry has no contiguous axis or is one-dimensional.
    """
    shapes = np.asarray(shapes, dtype=float)
    axis = geometry.contiguous_axis
    if axis is None or geometry.ndim < 2:
        return np.zeros(len(shapes))
    logs = np.log(shapes)
    return logs[:, axis] - logs.mean(axis=1)


def fit(log_footprint: np.ndarray, aspect: np.ndarray, log_ratio: np.ndarray) -> dict[str, Any]:
    """Per side, the levels' slope tables from rectangles at ``log_footprint`` with log
    aspect ``aspect`` and measured ``log_ratio = ln(P_rect / P_square)``; JSON-able."""
    from scipy.ndimage import median_filter  # only when fitting: keeps `predict` cold start low

    params: dict[str, Any] = {}
    for side, sign in SIDES.items():
        mine = np.sign(aspect) == sign
        if not mine.any():
            continue
        u, size = log_footprint[mine], np.abs(aspect[mine])
        slope = log_ratio[mine] / size  # per unit |a|: r = slope * A on either side
        level = np.maximum(np.round(size / LEVEL_STEP), 1)
        levels = []
        for k in np.unique(level):
            here = level == k
            at_knot: dict[float, list[float]] = {}  # repeated runs of one rectangle
            for x, y in zip(u[here].tolist(), slope[here].tolist(), strict=True):
                at_knot.setdefault(x, []).append(y)
            knots = sorted(at_knot)
            per_knot = np.array([statistics.median(at_knot[x]) for x in knots])  # their median
            levels.append(
                {
                    "a": float(size[here].max()),
                    "u": knots,
                    "slope": median_filter(per_knot, size=3, mode="nearest").tolist(),
                }
            )
        params[side] = levels
    return params


def corrected(params: dict[str, Any], aspect: np.ndarray) -> np.ndarray:
    """Whether :func:`evaluate` corrects each query: not square, and its side has
    measured rectangles (elsewhere the factor is 1 and the square curve answers)."""
    out = np.zeros(len(aspect), dtype=bool)
    for side, sign in SIDES.items():
        if side in params:
            out |= (np.sign(aspect) == sign) & (np.abs(aspect) > SQUARE_TOL)
    return out


def evaluate(
    params: dict[str, Any], log_footprint: np.ndarray, aspect: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Rate factor ``exp(r)`` for each query and whether its aspect lies beyond the
    levels measured at its footprint (or has none to rest on)."""
    factor = np.ones(len(aspect))
    beyond = np.abs(aspect) > SQUARE_TOL
    for side, sign in SIDES.items():
        mine = np.sign(aspect) == sign
        levels = params.get(side)
        if not levels or not mine.any():
            continue
        r, top = _side(levels, log_footprint[mine], np.abs(aspect[mine]))
        factor[mine] = np.exp(r)
        beyond[mine] = np.abs(aspect[mine]) > top + SQUARE_TOL
    return factor, beyond


def _side(
    levels: list[dict[str, Any]], u: np.ndarray, a: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``r`` at each query (footprint ``u``, |aspect| ``a``) from one side's levels, and
    the largest level answering there."""
    ordered = sorted(levels, key=lambda lv: lv["a"])
    first = min(lv["u"][0] for lv in ordered)
    last = max(lv["u"][-1] for lv in ordered)
    at = np.clip(u, first, last)  # beyond every rectangle: as at the outermost
    size = np.array([0.0] + [lv["a"] for lv in ordered])  # row 0: the square
    index = np.arange(len(size))[:, None]
    r = np.vstack(
        [np.zeros(len(u))] + [np.interp(u, lv["u"], lv["slope"]) * lv["a"] for lv in ordered]
    )
    here = np.vstack(
        [np.ones(len(u), dtype=bool)]
        + [(at >= lv["u"][0] - LEVEL_REACH) & (at <= lv["u"][-1] + LEVEL_REACH) for lv in ordered]
    )
    lo = np.where(here & (size[:, None] <= a), index, 0).max(axis=0)
    hi = np.where(here & (size[:, None] > a), index, len(size)).min(axis=0)
    hi = np.where(hi == len(size), lo, hi)  # beyond the top level here: held there
    top = np.where(here, index, 0).max(axis=0)
    span = size[hi] - size[lo]
    w = np.divide(a - size[lo], span, out=np.zeros_like(a), where=span > 0)
    cols = np.arange(len(u))
    return (1 - w) * r[lo, cols] + w * r[hi, cols], size[top]
