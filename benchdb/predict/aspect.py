"""A block's shape beyond its footprint: the row-length correction of a lookup.

Paper 003 looks P up by footprint alone (eq. 8-9).  Blocks of one footprint
but different row lengths (the extent along the contiguous axis, see
:class:`benchdb.kernels.geometry.Geometry`) run at different rates: short rows
pay the loop's per-row start-up and remainder more often, and long rows can
break the *layer condition* of Kerncraft (Hammer et al.) -- the neighbouring
rows a stencil reuses no longer fit in L1/L2.  The two effects have opposite
signs and act in different footprint ranges, so no fixed law would do
(docs/findings/lookup-layers.md): the correction is fitted from measured rectangles.

The sweep measures, at every other footprint, two rectangles whose rows are
2x longer and 2x shorter than the square's (:data:`collectors.sizes.ASPECT_FACTOR`).
With the log aspect ``a = ln(contiguous extent / geometric mean of the
extents)`` (0 for a square), each rectangle gives a slope

    s = ln(P_rect / P_square(footprint)) / a

with ``P_square`` the method's fit of the square curve at the rectangle's
footprint.  Per side (``a < 0`` shorter rows, ``a > 0`` longer), ``s`` is
interpolated linearly in log footprint between the rectangles' footprints
and held constant beyond them; the prediction is

    P(footprint, a) = P_square(footprint) * exp(s(footprint) * a),

log-linear in the aspect between the square and the measured rectangle.
Beyond the measured aspect the correction is held at its value there, and
the answer says ``aspect_extrapolated`` (so does any non-square shape of a
kernel measured in squares only: its correction is 1).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..kernels.geometry import Geometry

SQUARE_TOL = 0.1
"""|log aspect| up to this (rows within about 10 % of the square's) counts as square."""

SIDES = {"short": -1.0, "long": 1.0}


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
    """The per-side slope tables from rectangles at ``log_footprint`` with log aspect
    ``aspect`` and measured ``log_ratio = ln(P_rect / P_square)``; JSON-able."""
    from scipy.ndimage import median_filter  # only when fitting: keeps `predict` cold start low

    params: dict[str, Any] = {}
    for side, sign in SIDES.items():
        mine = np.sign(aspect) == sign
        if not mine.any():
            continue
        u, slope = log_footprint[mine], log_ratio[mine] / aspect[mine]
        knots = np.unique(u)  # repeated runs of one rectangle: the median slope
        per_knot = np.array([np.median(slope[u == k]) for k in knots])
        params[side] = {
            "u": knots.tolist(),
            "slope": median_filter(per_knot, size=3, mode="nearest").tolist(),
            "a_max": float(np.abs(aspect[mine]).max()),
        }
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
    """Rate factor ``exp(s * a)`` for each query and whether its aspect lies beyond
    the measured rectangles (or has none to rest on)."""
    factor = np.ones(len(aspect))
    beyond = np.abs(aspect) > SQUARE_TOL
    for side, sign in SIDES.items():
        mine = np.sign(aspect) == sign
        table = params.get(side)
        if table is None or not mine.any():
            continue
        slope = np.interp(log_footprint[mine], table["u"], table["slope"])
        a = np.clip(aspect[mine], -table["a_max"], table["a_max"])
        factor[mine] = np.exp(slope * a)
        beyond[mine] = np.abs(aspect[mine]) > table["a_max"] + SQUARE_TOL
    return factor, beyond
