"""``logcurve``: the logarithmic model of paper 003 §VI, eq. 10, with fitted breakpoints.

    Perf = A log x + λ      for x <= X1            (rising to the peak (X1, Y1))
           B log x + φ      for X1 <= x <= X2      (falling to memory (X2, Y2))
           Y2               for x >= X2            (the memory plateau)

The paper picked (X1, Y1) and (X2, Y2) by hand "to avoid outlying points".
Here every pair of measured footprints (X1 < X2) is tried as breakpoints; for
each pair the continuous curve is linear in its three unknowns (Y1, Y2, A),
so it is solved by least squares, and the pair with the smallest RMS
*relative* residual wins (relative, so the memory plateau counts as much as
the cache peak; the predictions are judged by relative error).  That pair is
then refined continuously (Nelder-Mead over X1, X2), since a cache's corner
rarely falls exactly on a measured size.  The winning
RMS relative residual is the reported fit error (``fit_rms_rel``); it enters
every answer's uncertainty.  log is the natural logarithm.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import ppoly
from .method import METHODS


def _design(u: np.ndarray, u1: np.ndarray, u2: np.ndarray) -> np.ndarray:
    """Columns (Y1, Y2, A) of the continuous eq. 10 curve, one design per knot pair.

    ``u1``, ``u2`` are arrays of K candidate breakpoints; the result is (K, n, 3).
    """
    u1, u2, x = u1[:, None], u2[:, None], u[None, :]
    t = np.clip((x - u1) / (u2 - u1), 0.0, 1.0)
    return np.stack([1.0 - t, t, np.where(x <= u1, x - u1, 0.0)], axis=-1)


def _solve(
    u: np.ndarray, y: np.ndarray, u1: np.ndarray, u2: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """RMS relative residual (K,) and coefficients (K, 3) of the least-squares fits."""
    design = _design(u, np.atleast_1d(u1), np.atleast_1d(u2)) / y[None, :, None]
    coef = np.linalg.pinv(design) @ np.ones_like(y)
    rel = np.einsum("knp,kp->kn", design, coef) - 1.0
    return np.sqrt(np.mean(rel**2, axis=1)), coef


def fit_eq10(u: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    """The breakpoints and pieces of eq. 10 fitted to ``(u, y)`` (see the module docstring)."""
    from scipy.optimize import minimize

    u0, un = float(u[0]), float(u[-1])
    i, j = np.triu_indices(len(u), k=1)
    rms_grid = _solve(u, y, u[i], u[j])[0]
    best = int(np.argmin(rms_grid))

    def objective(knots: np.ndarray) -> float:
        u1, u2 = np.clip(knots, u0, un)
        return float(_solve(u, y, u1, u2)[0][0]) if u2 - u1 > 1e-9 else np.inf

    refined = minimize(objective, np.array([u[i[best]], u[j[best]]]), method="Nelder-Mead")
    u1, u2 = (
        np.clip(refined.x, u0, un) if refined.fun < rms_grid[best] else (u[i[best]], u[j[best]])
    )
    rms_arr, coef = _solve(u, y, u1, u2)
    rms, (y1, y2, a) = float(rms_arr[0]), coef[0]
    b = (y2 - y1) / (u2 - u1)
    pieces = [(u0, a, y1 + a * (u0 - u1)), (u1, b, y1), (u2, 0.0, y2)]
    starts = [p for p, nxt in zip(pieces, [u1, u2, un], strict=True) if nxt > p[0]]
    breaks = [p[0] for p in starts] + [un]
    coefs = np.array([[p[1] for p in starts], [p[2] for p in starts]])
    return ppoly.to_params(
        np.array(breaks),
        coefs,
        fit_rms_rel=rms,
        A=float(a),
        lam=float(y1 - a * u1),
        B=float(b),
        phi=float(y1 - b * u1),
        X1=float(np.exp(u1)),
        Y1=float(y1),
        X2=float(np.exp(u2)),
        Y2=float(y2),
    )


class LogCurve:
    name = "logcurve"
    min_points = 4
    summary = "paper 003 eq. 10: two log-linear pieces through peak and memory plateau"

    fit = staticmethod(fit_eq10)
    evaluate = staticmethod(ppoly.evaluate)


METHODS.register(LogCurve())
