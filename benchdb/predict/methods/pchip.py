"""``pchip``: monotone piecewise cubic Hermite interpolation in log footprint.

Fritsch-Carlson PCHIP (``scipy.interpolate.PchipInterpolator``) passes through
every measured point like ``linear`` but with a continuous slope, and it never
overshoots: between two points it stays between their values, so a cache step
is followed without the ringing a cubic spline shows at a plateau's corner.
scipy is needed to fit only; the stored cubic is evaluated with numpy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import ppoly
from .method import METHODS


class Pchip:
    name = "pchip"
    min_points = 2
    summary = "monotone cubic (PCHIP) in log footprint through the measured points"

    def fit(self, u: np.ndarray, y: np.ndarray) -> dict[str, Any]:
        from scipy.interpolate import PchipInterpolator

        spline = PchipInterpolator(u, y, extrapolate=False)
        return ppoly.to_params(spline.x, spline.c, fit_rms_rel=0.0)

    evaluate = staticmethod(ppoly.evaluate)


METHODS.register(Pchip())
