"""Figures (matplotlib, Agg backend; PNG or SVG by the output file's suffix).

Each function draws one kind of figure from data the predictor and validator
return, and is named for what it draws:

* :func:`plot_performance_curve` -- rate vs footprint (log x) with the measured
  points, their spread, pathological points marked, the interpolants and the
  cache capacities (paper 003 Figs. 3 and 5).
* :func:`plot_predicted_vs_measured` -- independent-sweep points against the
  prediction (paper 003 Fig. 4).
* :func:`plot_roofline` -- cache-aware roofline with the STREAM ceilings, the
  measured peak and each kernel's measured rates.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .errors import UserError

FORMATS = (".png", ".svg")


def _figure(**kwargs: Any):  # -> (Figure, Axes)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(**kwargs)


def check_output(path: Path) -> Path:
    """``path`` if its suffix is a supported format and its folder exists."""
    if path.suffix.lower() not in FORMATS:
        raise UserError(f"output {path} must end in {' or '.join(FORMATS)}")
    if not path.parent.exists():
        raise UserError(f"folder {path.parent} does not exist; create it or choose another --out")
    return path


def _save(fig: Any, path: Path) -> Path:
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _mark_caches(ax: Any, caches: Sequence[tuple[str, float]]) -> None:
    for name, size in caches:
        ax.axvline(size, color="0.6", ls="--", lw=0.8)
        ax.text(size, 0.98, f" {name}", transform=ax.get_xaxis_transform(), va="top", fontsize=8)


def plot_performance_curve(
    curves: Sequence[dict[str, Any]],
    caches: Sequence[tuple[str, float]],
    path: Path,
    *,
    unit: str,
    title: str = "",
) -> Path:
    """Measured points (IQR bars; noisy/spike/dip in red) and each method's curve.

    ``curves``: one dict per kernel with ``kernel``, ``points``
    (:meth:`Curve.points_table`) and ``fits`` {method: (footprints, rates)}.
    """
    fig, ax = _figure(figsize=(8, 5))
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
    return _save(fig, path)


def plot_predicted_vs_measured(
    points: Sequence[dict[str, Any]], path: Path, *, title: str = ""
) -> Path:
    """Predicted vs measured rate of independent-sweep points, one marker per kernel/method."""
    if not points:
        raise UserError(
            "no independent-sweep points to plot; collect a second sweep of other sizes "
            "(benchdb collect --sizes ...) and run benchdb validate"
        )
    fig, ax = _figure(figsize=(6, 6))
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
    return _save(fig, path)


def plot_roofline(
    params: dict[str, Any],
    kernels: Sequence[dict[str, Any]],
    path: Path,
    *,
    title: str = "",
) -> Path:
    """Ceilings (one per level) and peak, with kernels' measured rates at their intensity.

    ``kernels``: dicts with ``kernel``, ``intensity`` (flop/byte) and ``rates``
    {level: median measured flop/s}.
    """
    fig, ax = _figure(figsize=(7, 5))
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
    return _save(fig, path)
