"""``linear``: straight lines between neighbouring measured points, in log footprint.

Paper 003 §V (Fig. 3) interpolates linearly between measured sizes.  We do so
in log x rather than x because the sizes are spaced geometrically and the
cache transitions are spread over *ratios* of footprint (a cache of capacity
C is partly missed from roughly C/2 to 2C): between two points a factor 1.5
apart, linear-in-x would put almost all of the change at the small end.  It
needs two points and rests exactly on the measurements.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import ppoly
from .method import METHODS


class Linear:
    name = "linear"
    min_points = 2
    summary = "piecewise linear in log footprint between measured points (paper 003 Fig. 3)"

    def fit(self, u: np.ndarray, y: np.ndarray) -> dict[str, Any]:
        return ppoly.to_params(u, ppoly.linear_coefs(u, y), fit_rms_rel=0.0)

    evaluate = staticmethod(ppoly.evaluate)


METHODS.register(Linear())
