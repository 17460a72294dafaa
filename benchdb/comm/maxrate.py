"""The max-rate model for k processes of a node communicating at once.

Choi et al. (paper 002, section 2.1) use a simplified extended max-rate model:

* eager and rendezvous regimes, eq. 2: ``T = α + k·n / (R_Cb + (k − 1)·R_Ci)``
  -- ``R_Cb`` the bandwidth one process sustains, ``R_Ci`` what each further
  process adds;
* short regime, eq. 3: ``T = α + k·n·β`` (the three-parameter fit gives
  negative parameters there, which the paper treats as an artifact).

Parameters come from multi-pair ping-pong (k concurrent pairs) fitted with
``scipy.optimize.curve_fit`` -- the paper's footnote 1.  Where a fit is not
possible (one value of k only, too few points, a failed or non-physical fit)
the regime falls back to the postal model of the same regime, and says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy.optimize import curve_fit

from .postal import PostalRegime


def maxrate_time(n: Any, k: Any, alpha: float, r_cb: float, r_ci: float) -> Any:
    """Paper 002 eq. 2 (works on scalars and numpy arrays)."""
    return alpha + k * n / (r_cb + (k - 1) * r_ci)


def short_time(n: Any, k: Any, alpha: float, beta: float) -> Any:
    """Paper 002 eq. 3."""
    return alpha + k * n * beta


@dataclass(frozen=True)
class MaxRateRegime:
    """One regime's max-rate parameters; ``form`` is ``maxrate``, ``short`` or ``postal``.

    ``postal`` means the fit fell back to the postal regime (``reason`` says
    why); then the time is the postal model's, ``α + n·β`` (paper 002 eq. 1),
    whatever k: without a max-rate fit nothing is known about how k concurrent
    senders share the node's channel, and docs/design.md falls back to postal.
    """

    name: str
    min_bytes: int
    max_bytes: int | None
    form: str
    alpha: float
    beta: float | None = None
    r_cb: float | None = None
    r_ci: float | None = None
    reason: str = ""

    def time(self, nbytes: float, k: float) -> float:
        return self.alpha + nbytes * self.per_byte(k)

    def per_byte(self, k: float) -> float:
        """Seconds per byte of one message when k processes share the node's channel:
        eq. 2's ``k / (R_Cb + (k - 1) R_Ci)``, eq. 3's ``k β``, or the postal ``β``."""
        if self.form == "maxrate":
            return k / (self.r_cb + (k - 1) * self.r_ci)
        if self.form == "short":
            return k * self.beta
        return self.beta

    def to_dict(self) -> dict[str, Any]:
        optional = ("beta", "r_cb", "r_ci")
        return {k: v for k, v in asdict(self).items() if v is not None or k not in optional}


def fallback(postal: PostalRegime, reason: str) -> MaxRateRegime:
    return MaxRateRegime(
        name=postal.name,
        min_bytes=postal.min_bytes,
        max_bytes=postal.max_bytes,
        form="postal",
        alpha=postal.alpha,
        beta=postal.beta,
        reason=reason,
    )


def fit_regime(
    postal: PostalRegime,
    nbytes: Sequence[float],
    k: Sequence[float],
    times: Sequence[float],
    *,
    short: bool,
) -> MaxRateRegime:
    """Fit one regime on multi-pair ping-pong points (n, k, T); postal fallback.

    ``short`` selects eq. 3; otherwise eq. 2, whose non-physical results
    (a negative parameter) also fall back.  Residuals are relative
    (``sigma = T``), as for the postal fit.
    """
    n = np.asarray(nbytes, dtype=float)
    kk = np.asarray(k, dtype=float)
    t = np.asarray(times, dtype=float)
    if len(np.unique(kk)) < 2:
        return fallback(postal, "one value of k only: run with more ranks per node")
    nparams = 2 if short else 3
    if len(t) <= nparams:
        return fallback(postal, f"{len(t)} points, need more than {nparams}")
    base = dict(name=postal.name, min_bytes=postal.min_bytes, max_bytes=postal.max_bytes)
    try:
        if short:
            (alpha, beta), _ = curve_fit(
                lambda x, a, b: short_time(x[0], x[1], a, b),
                np.vstack([n, kk]),
                t,
                p0=[postal.alpha, max(postal.beta, 1e-12)],
                sigma=t,
                bounds=([0.0, 0.0], [np.inf, np.inf]),
            )
            return MaxRateRegime(**base, form="short", alpha=float(alpha), beta=float(beta))
        rate0 = 1.0 / max(postal.beta, 1e-12)
        (alpha, r_cb, r_ci), _ = curve_fit(
            lambda x, a, b, c: maxrate_time(x[0], x[1], a, b, c),
            np.vstack([n, kk]),
            t,
            p0=[postal.alpha, rate0, rate0 / 2],
            sigma=t,
            bounds=([0.0, 1.0, 0.0], [np.inf, np.inf, np.inf]),
        )
    except (RuntimeError, ValueError) as exc:
        return fallback(postal, f"curve_fit failed ({exc})")
    return MaxRateRegime(
        **base, form="maxrate", alpha=float(alpha), r_cb=float(r_cb), r_ci=float(r_ci)
    )
