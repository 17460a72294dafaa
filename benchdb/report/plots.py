"""The report's figures, drawn with matplotlib's object API on the Agg canvas.

``matplotlib.figure.Figure`` is used directly (no ``pyplot``): no global
state, no display, safe in a server or a test.  Each function returns a
figure; :func:`save` writes it as PNG and SVG.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ..units import fmt_bytes

FORMATS = ("png", "svg")
VERDICT_COLOURS = {
    "slower": "#c0392b",
    "faster": "#27ae60",
    "noisy": "#e69f00",
    "unchanged": "#7f8c8d",
}


def save(fig: Figure, folder: Path, stem: str) -> dict[str, Path]:
    """Write ``stem.png`` and ``stem.svg`` into ``folder``; the paths by format."""
    paths = {}
    for fmt in FORMATS:
        path = folder / f"{stem}.{fmt}"
        fig.savefig(path, format=fmt, dpi=110, bbox_inches="tight")
        paths[fmt] = path
    return paths


def _mark_caches(ax: Any, caches: Sequence[dict[str, Any]]) -> None:
    for cache in caches:
        if cache.get("type") == "Instruction":
            continue
        size = cache["size_bytes"]
        ax.axvline(size, color="#999999", linestyle=":", linewidth=1)
        ax.annotate(
            f"{cache['name']} {fmt_bytes(size)}",
            (size, 1.0),
            xycoords=("data", "axes fraction"),
            rotation=90,
            fontsize=7,
            color="#666666",
            ha="right",
            va="top",
        )


def performance_vs_footprint(
    frame: pd.DataFrame, kernel: str, caches: Sequence[dict[str, Any]]
) -> Figure:
    """Rate against footprint on log axes, one line per configuration.

    Paper 003's Fig. 4-6 view: performance looked up by memory footprint, with
    the machine's cache capacities marked.  The rate is flop/s, else B/s, else
    (a kernel with neither counted, such as a halo update) points per second.
    """
    frame = frame.assign(point_rate=frame["points"] / frame["t_median"])
    column, unit = next(
        (c, u)
        for c, u in (("flop_rate", "flop/s"), ("byte_rate", "B/s"), ("point_rate", "points/s"))
        if (frame[c].fillna(0) > 0).any()
    )
    fig = Figure(figsize=(6.4, 3.6))
    ax = fig.add_subplot()
    for (threads, precision, context), group in frame.groupby(
        ["threads", "precision", "context"], sort=True
    ):
        g = group.sort_values("footprint_bytes")
        ax.plot(
            g["footprint_bytes"],
            g[column],
            marker="o",
            markersize=3,
            label=f"{threads} thr, {precision}, {context}",
        )
    _mark_caches(ax, caches)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("memory footprint (bytes)")
    ax.set_ylabel(unit)
    ax.set_title(kernel)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7)
    return fig


def comparison_forest(results: pd.DataFrame, threshold: float, limit: int = 40) -> Figure:
    """Change (contender / baseline) with its interval per point, the threshold band shaded.

    Shows at most ``limit`` points, the largest changes first.
    """
    shown = results.assign(size=np.abs(np.log(results["ratio"])))
    shown = shown.sort_values("size", ascending=False).head(limit).iloc[::-1]
    fig = Figure(figsize=(7.0, 0.9 + 0.22 * len(shown)))
    ax = fig.add_subplot()
    y = np.arange(len(shown))
    pct = (shown["ratio"] - 1) * 100
    err = np.vstack([pct - (shown["ci_low"] - 1) * 100, (shown["ci_high"] - 1) * 100 - pct])
    colours = [VERDICT_COLOURS[v] for v in shown["verdict"]]
    ax.axvspan(-threshold / (1 + threshold) * 100, threshold * 100, color="#eeeeee")
    ax.axvline(0, color="#555555", linewidth=0.8)
    ax.errorbar(pct, y, xerr=np.clip(err, 0, None), fmt="none", ecolor="#555555", elinewidth=1)
    ax.scatter(pct, y, c=colours, zorder=3, s=18)
    labels = [
        f"{r.kernel} {r.shape_key} t{r.threads} {r.precision[-2:]}" for r in shown.itertuples()
    ]
    ax.set_yticks(y, labels, fontsize=7)
    ax.set_xlabel("change of median time (%), contender vs baseline; shaded: threshold")
    for verdict, colour in VERDICT_COLOURS.items():
        ax.scatter([], [], c=colour, s=18, label=verdict)
    ax.legend(fontsize=7, loc="lower right")
    return fig


def history_plot(series: Sequence[Any], kernel: str) -> Figure:
    """Median time relative to each series' first run, per run, steps marked.

    ``series`` are :class:`benchdb.regress.Series`; one line per shape and
    configuration, normalised so that all fit one axis.
    """
    fig = Figure(figsize=(6.4, 3.4))
    ax = fig.add_subplot()
    order = pd.concat([s.values[["run_started_at", "run_id"]] for s in series])
    runs = order.drop_duplicates("run_id").sort_values(["run_started_at", "run_id"])["run_id"]
    position = {int(r): i for i, r in enumerate(runs)}
    for s in series:
        v = s.values["t_median"].to_numpy()
        x = [position[int(r)] for r in s.values["run_id"]]
        line = ax.plot(x, v / v[0], marker=".", label=f"{s.shape_key} t{s.threads}")[0]
        for step in s.steps:
            at = position[step["run_id"]] - 0.5
            ax.axvline(at, color=line.get_color(), linestyle="--", alpha=0.7)
    if len(position) <= 20:
        ax.set_xticks(range(len(position)), [str(r) for r in position], fontsize=7)
    ax.set_xlabel("run (oldest first); dashed: detected step")
    ax.set_ylabel("median time / first run")
    ax.set_title(kernel)
    ax.grid(True, alpha=0.3)
    if len(series) <= 8:
        ax.legend(fontsize=7)
    return fig
