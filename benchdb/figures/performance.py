"""Performance figures: rate by footprint, predicted against measured, roofline.

* :func:`performance_curve` -- rate vs footprint (log x) with the measured
  points, their spread, pathological points marked, the interpolants and the
  cache capacities (paper 003 Figs. 3 and 5).
* :func:`predicted_vs_measured` -- independent-sweep points against the
  prediction (paper 003 Fig. 4).
* :func:`roofline` -- cache-aware roofline with the STREAM ceilings, the
  measured peak and each kernel's measured rates.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from ..errors import UserError


def _mark_caches(ax: Any, caches: Sequence[tuple[str, float]]) -> None:
    for name, size in caches:
        ax.axvline(size, color="0.6", ls="--", lw=0.8)
        ax.text(size, 0.98, f" {name}", transform=ax.get_xaxis_transform(), va="top", fontsize=8)


def performance_curve(
    curves: Sequence[dict[str, Any]],
    caches: Sequence[tuple[str, float]],
    *,
    unit: str,
    title: str = "",
) -> Figure:
    """Measured points (IQR bars; noisy/spike/dip in red) and each method's curve.

    ``curves``: one dict per kernel with ``kernel``, ``points``
    (:meth:`Curve.points_table`) and ``fits`` {method: (footprints, rates)}.
    """
    fig = Figure(figsize=(8, 5))
    ax = fig.add_subplot()
    scale = 1e-9
    styles = ["-", "--", ":", "-."]
    for c in curves:
        pts = c["points"]
        x = np.array([p["footprint_bytes"] for p in pts])
        y = np.array([p["rate"] for p in pts]) * scale
        err = y * np.array([p["spread_rel"] for p in pts]) / 2
        bad = np.array([bool(p["flags"]) for p in pts])
        line = ax.errorbar(
            x, y, yerr=err, fmt="o", ms=4, capsize=2, label=f"{c['kernel']} measured"
        )
        color = line[0].get_color()
        if bad.any():
            ax.plot(x[bad], y[bad], "x", color="red", ms=7, mew=1.5)
            for xi, yi, p in zip(x, y, pts, strict=True):
                shape = [f for f in p["flags"] if f in ("spike", "dip")]
                if shape:
                    ax.annotate(",".join(shape), (xi, yi), fontsize=7, color="red")
        for k, (method, (fx, fy)) in enumerate(c["fits"].items()):
            ax.plot(
                fx,
                np.asarray(fy) * scale,
                styles[k % 4],
                color=color,
                lw=1,
                label=f"{c['kernel']} {method}",
            )
    _mark_caches(ax, caches)
    ax.set_xscale("log")
    ax.set_xlabel("memory footprint (bytes)")
    ax.set_ylabel(f"performance (G{unit})")
    ax.set_title(
        title or "performance by memory footprint (paper 003 Fig. 3/5); red x: flagged point"
    )
    ax.legend(fontsize=7, ncol=2)
    return fig


def predicted_vs_measured(points: Sequence[dict[str, Any]], *, title: str = "") -> Figure:
    """Predicted vs measured rate of independent-sweep points, one marker per kernel/method."""
    if not points:
        raise UserError(
            "no independent-sweep points to plot; collect a second sweep of other sizes "
            "(benchdb collect --sizes ...) and run benchdb validate"
        )
    fig = Figure(figsize=(6, 6))
    ax = fig.add_subplot()
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for p in points:
        groups.setdefault((p["kernel"], p["method"]), []).append(p)
    for (kernel, method), ps in sorted(groups.items()):
        m = np.array([p["rate"] for p in ps]) * 1e-9
        q = np.array([p["predicted_rate"] for p in ps]) * 1e-9
        ax.plot(m, q, "o", ms=4, label=f"{kernel} {method}")
    lo = min(min(p["rate"], p["predicted_rate"]) for p in points) * 1e-9
    hi = max(max(p["rate"], p["predicted_rate"]) for p in points) * 1e-9
    span = np.array([lo * 0.9, hi * 1.1])
    ax.plot(span, span, "k-", lw=1, label="exact")
    ax.fill_between(span, span * 0.9, span * 1.1, color="0.85", label="±10 %")
    ax.set_xlabel("measured (G unit/s)")
    ax.set_ylabel("predicted (G unit/s)")
    ax.set_title(title or "predicted vs measured, independent sweep (paper 003 Fig. 4)")
    ax.legend(fontsize=7)
    return fig


def roofline(
    params: dict[str, Any], kernels: Sequence[dict[str, Any]], *, title: str = ""
) -> Figure:
    """Ceilings (one per level) and peak, with kernels' measured rates at their intensity.

    ``kernels``: dicts with ``kernel``, ``intensity`` (flop/byte) and ``rates``
    {level: median measured flop/s}.
    """
    fig = Figure(figsize=(7, 5))
    ax = fig.add_subplot()
    ai = np.geomspace(1 / 64, 64, 200)
    peak = params["peak_flops"]
    for c in params["ceilings"]:
        if c["bandwidth"] is None or c.get("borrowed_from"):
            continue
        roof = np.minimum(peak, ai * c["bandwidth"]) if peak else ai * c["bandwidth"]
        ax.plot(ai, roof * 1e-9, lw=1, label=f"{c['level']} {c['bandwidth'] / 1e9:.3g} GB/s")
    if peak:
        ax.axhline(
            peak * 1e-9, color="k", lw=1, ls=":", label=f"measured peak {peak / 1e9:.3g} Gflop/s"
        )
    markers = "os^vD<>p*h"
    for i, k in enumerate(kernels):
        for level, rate in k["rates"].items():
            ax.plot(k["intensity"], rate * 1e-9, markers[i % len(markers)], ms=5)
            ax.annotate(f"{k['kernel']} {level}", (k["intensity"], rate * 1e-9), fontsize=6)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (flop/byte)")
    ax.set_ylabel("Gflop/s")
    ax.set_title(title or "cache-aware roofline (STREAM ceilings)")
    ax.legend(fontsize=7)
    return fig
