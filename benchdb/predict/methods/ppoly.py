"""Piecewise polynomials in log footprint: the one form every method's fit is stored in.

Each method fits with whatever it needs (scipy for PCHIP, numpy least squares
for the logarithmic curve) and stores breakpoints and coefficients in scipy's
``PPoly`` convention (``c[m, i] * (u - b[i]) ** (k - m)``).  Evaluating them
needs numpy alone, so a prediction from a stored model never imports scipy, whose
import would take much of ``predict``'s start-up (docs/findings/lookup-layers.md).

Outside the breakpoints the value is held constant: below the smallest
measured footprint the first value, beyond the largest the last (the memory
plateau).  The caller flags such answers as extrapolated.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def to_params(breaks: np.ndarray, coefs: np.ndarray, **extra: Any) -> dict[str, Any]:
    """JSON-able parameters of a piecewise polynomial (plus method-specific extras)."""
    return {
        "breaks": np.asarray(breaks, dtype=float).tolist(),
        "coefs": np.asarray(coefs, dtype=float).tolist(),
        **extra,
    }


def evaluate(params: dict[str, Any], u: np.ndarray) -> np.ndarray:
    """Values at log footprints ``u`` (Horner's rule, vectorised)."""
    b = np.asarray(params["breaks"], dtype=float)
    c = np.asarray(params["coefs"], dtype=float)
    u = np.clip(np.asarray(u, dtype=float), b[0], b[-1])
    i = np.clip(np.searchsorted(b, u, side="right") - 1, 0, len(b) - 2)
    dx = u - b[i]
    out = c[0, i].copy()
    for m in range(1, c.shape[0]):
        out = out * dx + c[m, i]
    return out


def linear_coefs(u: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Coefficients (2, n-1) of the broken line through (u, y)."""
    return np.vstack([np.diff(y) / np.diff(u), y[:-1]])
