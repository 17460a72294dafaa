"""The report's interactive charts: plotly figures, one function per kind of chart.

Plotly (plotly.py builds the figure, the plotly.js it ships draws it in the
browser) gives every chart hover values, zoom, legend toggles and a PNG
download with no server and no network: the page loads ``plotly.min.js``
from the report folder, or carries it inline.  Hover text is formatted here
with :mod:`benchdb.units`, the one source of the units benchdb prints.

Plotly places shapes on log axes in data units but annotations in log10
units (plotly.js documents this); :func:`_mark_caches` handles both.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio

from ..comm.postal import PiecewisePostal
from ..regress import Series
from ..units import fmt_bytes, fmt_change, fmt_rate, fmt_seconds
from ..verdicts import Verdict
from .content import KernelContent

PALETTE = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22",
)  # fmt: skip
VERDICT_COLOURS = {
    Verdict.SLOWER: "#c0392b",
    Verdict.FASTER: "#27ae60",
    Verdict.NOISY: "#e69f00",
    Verdict.UNCHANGED: "#7f8c8d",
}
OTHER_VERDICT = "#34495e"
CONFIG = {"displaylogo": False, "responsive": True, "toImageButtonOptions": {"scale": 2}}


def embed(fig: go.Figure, div_id: str, *, wide: bool = False) -> str:
    """The figure as a ``<div>`` and the script that draws it (plotly.js loaded once per
    page); ``wide`` spans the whole row of the page's chart grid."""
    html = pio.to_html(fig, config=CONFIG, include_plotlyjs=False, full_html=False, div_id=div_id)
    return f'<div class="chart{" wide" if wide else ""}">{html}</div>'


def verdict_colour(verdict: str) -> str:
    return VERDICT_COLOURS.get(verdict, OTHER_VERDICT)


AXIS_STYLE = {
    "exponentformat": "SI",
    "gridcolor": "#e4eaf1",
    "linecolor": "#9aa5b1",
    "showline": True,
    "zeroline": False,
    "ticks": "outside",
    "tickcolor": "#9aa5b1",
    "automargin": True,
}


def _layout(fig: go.Figure, title: str, x: str, y: str, height: int = 360) -> go.Figure:
    """The house style, set directly rather than through a plotly template (applying
    one costs a tenth of a second per figure); a legend the figure set keeps its place."""
    legend = {"font": {"size": 10}, "orientation": "h", "y": -0.22, "x": 0}
    fig.update_layout(
        template="none",
        paper_bgcolor="white",
        plot_bgcolor="white",
        colorway=PALETTE,
        title={"text": title, "x": 0.01, "font": {"size": 14}},
        xaxis_title=x,
        yaxis_title=y,
        height=height,
        margin={"l": 64, "r": 16, "t": 40, "b": 48},
        legend={**legend, **fig.layout.legend.to_plotly_json()},
        hoverlabel={"font_size": 11},
        font={"family": "system-ui, sans-serif", "size": 11},
    )
    fig.update_xaxes(**AXIS_STYLE)
    fig.update_yaxes(**AXIS_STYLE)
    return fig


def _mark_caches(fig: go.Figure, caches: Sequence[tuple[str, int]]) -> None:
    """A dotted line and a label at each data cache's capacity (log x axis)."""
    for name, size in caches:
        fig.add_shape(
            type="line", x0=size, x1=size, xref="x", y0=0, y1=1, yref="paper",
            line={"color": "#999999", "dash": "dot", "width": 1},
        )  # fmt: skip
        fig.add_annotation(
            x=math.log10(size), xref="x", y=1, yref="paper", yanchor="top", xanchor="right",
            text=f"{name} {fmt_bytes(size)}", showarrow=False, textangle=-90,
            font={"size": 9, "color": "#777777"},
        )  # fmt: skip


def _ratio_band(fig: go.Figure, threshold: float, axis: str = "y") -> None:
    """Shade the band of changes within the threshold on the log ratio ``axis`` ("x" or "y"),
    and draw the line of no change."""
    other = "x" if axis == "y" else "y"
    band = (1 / (1 + threshold), 1 + threshold)
    for kind, (lo, hi), style in (
        ("rect", band, {"fillcolor": "#eeeeee", "line": {"width": 0}}),
        ("line", (1, 1), {"line": {"color": "#555555", "width": 1}}),
    ):
        fig.add_shape(
            type=kind, layer="below", **style,
            **{f"{axis}ref": axis, f"{axis}0": lo, f"{axis}1": hi},
            **{f"{other}ref": "paper", f"{other}0": 0, f"{other}1": 1},
        )  # fmt: skip


RATIO_TICKS = (1 / 256, 1 / 64, 1 / 16, 1 / 4, 1 / 2, 1, 2, 4, 16, 64, 256, 1024)
FINE_TICKS = (0.8, 1.25)
"""Also labelled on a ratio axis spanning less than 4x: the threshold's neighbourhood."""


def _ratio_axis(low: float, high: float, threshold: float) -> dict[str, Any]:
    """A log ratio axis spanning ``low..high`` and the threshold band, its ticks labelled
    as factors (x1/2, x2)."""
    low, high = min(low, 1 / (1 + threshold)) / 1.15, max(high, 1 + threshold) * 1.15
    candidates = RATIO_TICKS + FINE_TICKS if high / low < 4 else RATIO_TICKS
    shown = sorted(v for v in candidates if low <= v <= high)
    text = [f"×1/{1 / v:.3g}" if v < 1 and v not in FINE_TICKS else f"×{v:.3g}" for v in shown]
    return {
        "type": "log",
        "range": [math.log10(low), math.log10(high)],  # plotly: log axes range in log10
        "tickmode": "array",
        "tickvals": shown,
        "ticktext": text,
    }


def curve(content: KernelContent, caches: Sequence[tuple[str, int]]) -> go.Figure:
    """Rate against footprint: the collection's points (x: flagged), the baseline's
    (open circles) and the prediction's curve, per configuration; caches marked."""
    fig = go.Figure()
    unit = content.unit
    predicted = {p.config: p for p in content.predictions}
    for i, (config, group) in enumerate(content.measured.groupby("config", sort=True)):
        colour = PALETTE[i % len(PALETTE)]
        for role, g in sorted(group.groupby("role"), key=lambda rg: rg[0] != "collection"):
            g = g.sort_values("footprint_bytes")
            own = role == "collection"
            pred = predicted.get(config) if own else None
            vs = (
                [fmt_change(r / p) for r, p in zip(g["rate"], pred.at_points[g.index], strict=True)]
                if pred is not None
                else ["-"] * len(g)
            )
            flagged = [bool(f) for f in g["flags"]]
            fig.add_trace(
                go.Scatter(
                    x=g["footprint_bytes"],
                    y=g["rate"],
                    mode="markers",
                    name=f"{config}, {role} run {int(g['run_id'].iloc[0])}",
                    marker={
                        "color": colour,
                        "size": 7 if own else 6,
                        "symbol": [
                            ("x" if f else "circle") if own else "circle-open" for f in flagged
                        ],
                        "opacity": 1.0 if own else 0.7,
                    },
                    customdata=np.column_stack(
                        [
                            g["shape_key"],
                            [fmt_bytes(v) for v in g["footprint_bytes"]],
                            [fmt_rate(v, unit) for v in g["rate"]],
                            [fmt_seconds(v) for v in g["t_median"]],
                            [f"{v:.1%}" for v in g["t_cv"]],
                            [", ".join(f) or "none" for f in g["flags"]],
                            vs,
                        ]
                    ),
                    hovertemplate=(
                        f"<b>%{{customdata[0]}}</b> ({role}, {config})<br>"
                        "footprint %{customdata[1]}<br>rate %{customdata[2]}<br>"
                        "median time %{customdata[3]} (CV %{customdata[4]})<br>"
                        "flags: %{customdata[5]}<br>rate vs prediction: %{customdata[6]}"
                        "<extra></extra>"
                    ),
                )
            )
        if config in predicted:
            p = predicted[config]
            fig.add_trace(
                go.Scatter(
                    x=p.footprint,
                    y=p.rate,
                    mode="lines",
                    name=f"{config}, predicted ({p.method})",
                    line={"color": colour, "width": 1.5},
                    customdata=np.column_stack(
                        [[fmt_bytes(v) for v in p.footprint], [fmt_rate(v, unit) for v in p.rate]]
                    ),
                    hovertemplate=(
                        f"predicted ({p.method}, {config})<br>footprint %{{customdata[0]}}<br>"
                        "rate %{customdata[1]}<extra></extra>"
                    ),
                )
            )
    _mark_caches(fig, caches)
    fig.update_xaxes(type="log")
    fig.update_yaxes(type="log", dtick="D2")
    return _layout(fig, f"{content.kernel}: rate by footprint", "footprint (bytes)", unit)


def ratios(comparison: pd.DataFrame, threshold: float, kernel: str) -> go.Figure:
    """Each point's change (contender / baseline median) with its confidence interval,
    against footprint; markers coloured by the point's verdict, the threshold band shaded."""
    fig = go.Figure()
    for i, (key, g) in enumerate(comparison.groupby(["threads", "precision", "context"])):
        g = g.sort_values("footprint_bytes")
        label = f"{key[0]} thr, {key[1]}, {key[2]}"
        fig.add_trace(
            go.Scatter(
                x=g["footprint_bytes"],
                y=g["ratio"],
                mode="lines+markers",
                name=label,
                line={"color": PALETTE[i % len(PALETTE)], "width": 1},
                marker={
                    "color": [verdict_colour(v) for v in g["verdict"]],
                    "size": 8,
                    "line": {"color": "white", "width": 1},
                },
                error_y={
                    "type": "data",
                    "symmetric": False,
                    "array": (g["ci_high"] - g["ratio"]).clip(lower=0),
                    "arrayminus": (g["ratio"] - g["ci_low"]).clip(lower=0),
                    "color": "#888888",
                    "thickness": 1,
                    "width": 3,
                },
                customdata=np.column_stack(
                    [
                        g["shape_key"],
                        [fmt_bytes(v) for v in g["footprint_bytes"]],
                        [fmt_seconds(v) for v in g["baseline_median"]],
                        [fmt_seconds(v) for v in g["contender_median"]],
                        [fmt_change(v) for v in g["ratio"]],
                        [
                            f"{fmt_change(a)} to {fmt_change(b)}"
                            for a, b in zip(g["ci_low"], g["ci_high"], strict=True)
                        ],
                        [f"{v:.3g}" for v in g["p_value"]],
                        g["verdict"],
                    ]
                ),
                hovertemplate=(
                    f"<b>%{{customdata[0]}}</b> ({label})<br>footprint %{{customdata[1]}}<br>"
                    "baseline %{customdata[2]}, contender %{customdata[3]}<br>"
                    "change %{customdata[4]} (interval %{customdata[5]})<br>"
                    "p = %{customdata[6]}: <b>%{customdata[7]}</b><extra></extra>"
                ),
            )
        )
    _ratio_band(fig, threshold)
    fig.update_xaxes(type="log")
    fig.update_yaxes(
        **_ratio_axis(comparison["ci_low"].min(), comparison["ci_high"].max(), threshold)
    )
    return _layout(
        fig,
        f"{kernel}: change per point",
        "footprint (bytes)",
        "contender / baseline median time",
    )


KERNEL_KEY = ["kernel", "threads", "precision", "context"]


def _row_label(kernel: str, threads: int, precision: str, context: str) -> str:
    return f"{kernel} ({threads} thr, {precision}, {context})"


def _verdict_markers(
    frame: pd.DataFrame, ratio: str, name: str, hover: str, marker: dict[str, Any]
) -> go.Scatter:
    """One marker per row of ``frame`` at its ``ratio`` on its kernel configuration's row,
    coloured by its verdict; ``hover`` may use the row's fields as ``%{customdata[i]}``
    in the order kernel, shape (or points), change, verdict."""
    detail = frame["shape_key"] if "shape_key" in frame else frame["points"].astype(str) + " points"
    return go.Scatter(
        x=frame[ratio],
        y=[_row_label(*k) for k in frame[KERNEL_KEY].itertuples(index=False, name=None)],
        mode="markers",
        name=name,
        marker={**marker, "color": [verdict_colour(v) for v in frame["verdict"]]},
        customdata=np.column_stack(
            [frame["kernel"], detail, [fmt_change(v) for v in frame[ratio]], frame["verdict"]]
        ),
        hovertemplate=hover + "<extra></extra>",
    )


def overview(results: pd.DataFrame, kernels: pd.DataFrame, threshold: float) -> go.Figure:
    """Every kernel configuration's points as dots (change, coloured by verdict) on one
    row, its median change as a diamond coloured by the kernel's verdict."""
    order = kernels.sort_values("median_ratio")
    labels = [_row_label(*k) for k in order[KERNEL_KEY].itertuples(index=False, name=None)]
    fig = go.Figure()
    fig.add_trace(
        _verdict_markers(
            results,
            "ratio",
            "points",
            "%{customdata[0]} %{customdata[1]}: %{customdata[2]} (<b>%{customdata[3]}</b>)",
            {"size": 6, "opacity": 0.6},
        )
    )
    fig.add_trace(
        _verdict_markers(
            order,
            "median_ratio",
            "kernel median",
            "<b>%{customdata[0]}</b>: median change %{customdata[2]} over %{customdata[1]}: "
            "<b>%{customdata[3]}</b>",
            {"size": 12, "symbol": "diamond", "line": {"color": "#222222", "width": 1}},
        )
    )
    _ratio_band(fig, threshold, axis="x")
    fig.update_xaxes(**_ratio_axis(results["ratio"].min(), results["ratio"].max(), threshold))
    fig.update_yaxes(categoryorder="array", categoryarray=labels, automargin=True)
    fig.update_layout(showlegend=False)  # the title says what the markers are
    return _layout(
        fig,
        "Each kernel's change: dots its points, a diamond their median",
        "contender / baseline median time",
        "",
        height=max(260, 60 + 26 * len(labels)),
    )


def history(series: Sequence[Series], kernel: str) -> go.Figure:
    """Each point's median time over runs, relative to its first run; steps the
    detector found marked with a cross at the first run after the step."""
    values = pd.concat([s.values[["run_started_at", "run_id"]] for s in series])
    runs = values.drop_duplicates("run_id").sort_values(["run_started_at", "run_id"])["run_id"]
    position = {int(r): i for i, r in enumerate(runs)}
    configs = {(s.threads, s.precision, s.context) for s in series}
    fig = go.Figure()
    for i, s in enumerate(series):
        colour = PALETTE[i % len(PALETTE)]
        v = s.values
        t = v["t_median"].to_numpy(dtype=float)
        label = f"{s.shape_key} ({fmt_bytes(s.footprint_bytes)})"
        if len(configs) > 1:
            label += f", {s.threads} thr, {s.precision}, {s.context}"
        tags = [", ".join(x) for x in v["run_tags"]]
        fig.add_trace(
            go.Scatter(
                x=[position[int(r)] for r in v["run_id"]],
                y=t / t[0],
                mode="lines+markers",
                name=label,
                line={"color": colour, "width": 1},
                marker={"size": 5},
                customdata=np.column_stack(
                    [
                        v["run_id"],
                        tags,
                        [fmt_seconds(x) for x in t],
                        [fmt_change(x) for x in t / t[0]],
                    ]
                ),
                hovertemplate=(
                    f"<b>{label}</b><br>run %{{customdata[0]}} [%{{customdata[1]}}]<br>"
                    "median %{customdata[2]} (%{customdata[3]} vs first run)<extra></extra>"
                ),
            )
        )
        for step in s.steps:
            at = v.index[v["run_id"] == step["run_id"]][0]
            fig.add_trace(
                go.Scatter(
                    x=[position[int(step["run_id"])]],
                    y=[t[at] / t[0]],
                    mode="markers",
                    showlegend=False,
                    marker={
                        "symbol": "x-thin",
                        "size": 16,
                        "line": {
                            "width": 3,
                            "color": verdict_colour(str(step.get("direction", ""))),
                        },
                    },
                    hovertemplate=(
                        f"<b>step {fmt_change(1 + step['change'])}</b> ({label})<br>"
                        f"from run {step['previous_run_id']} to run {step['run_id']}<br>"
                        f"{_environment_text(step)}<extra></extra>"
                    ),
                )
            )
    fig.update_xaxes(
        tickmode="array",
        tickvals=list(position.values()),
        ticktext=[str(r) for r in position],
        title="run (oldest first)",
    )
    relative = np.concatenate(
        [s.values["t_median"].to_numpy(float) / s.values["t_median"].iloc[0] for s in series]
    )
    fig.update_yaxes(**_ratio_axis(relative.min(), relative.max(), 0.0))
    fig.update_layout(legend={"orientation": "v", "x": 1.01, "y": 1, "title": "shape (footprint)"})
    return _layout(
        fig,
        f"{kernel}: history of each point (x: a step found)",
        "run (oldest first)",
        "median time / first run",
    )


def _environment_text(step: dict[str, Any]) -> str:
    diff = step.get("environment_diff") or []
    if not diff:
        return "same environment"
    shown = "<br>".join(f"{d['field']}: {d['before']} → {d['after']}" for d in diff[:6])
    more = f"<br>... {len(diff) - 6} more" if len(diff) > 6 else ""
    return f"environment changed:<br>{shown}{more}"


def comm_fit(
    frame: pd.DataFrame, models: dict[str, PiecewisePostal], benchmark: str, title: str
) -> go.Figure:
    """Measured medians of one MPI benchmark per placement against its piecewise postal
    fit (paper 001 eq. 10, paper 002 eq. 1); dotted: the regime boundaries."""
    fig = go.Figure()
    data = frame[frame["benchmark"] == benchmark]
    for i, (placement, g) in enumerate(data.groupby("placement", sort=True)):
        colour = PALETTE[i % len(PALETTE)]
        g = g.sort_values("message_bytes")
        fig.add_trace(
            go.Scatter(
                x=g["message_bytes"],
                y=g["t_median"],
                mode="markers",
                name=f"{placement} measured",
                marker={"color": colour, "size": 6},
                customdata=np.column_stack(
                    [
                        [fmt_bytes(v) for v in g["message_bytes"]],
                        [fmt_seconds(v) for v in g["t_median"]],
                    ]
                ),
                hovertemplate=(
                    f"{placement}: %{{customdata[0]}} in %{{customdata[1]}}<extra>measured</extra>"
                ),
            )
        )
        model = models.get(str(placement))
        if model is None:
            continue
        n = np.unique(np.geomspace(1, g["message_bytes"].max(), 300).astype(int))
        t = np.array([model.time(x) for x in n])
        regime = [model.regime(x).name for x in n]
        fig.add_trace(
            go.Scatter(
                x=n,
                y=t,
                mode="lines",
                name=f"{placement} postal fit",
                line={"color": colour, "width": 1.5},
                customdata=np.column_stack(
                    [[fmt_bytes(v) for v in n], [fmt_seconds(v) for v in t], regime]
                ),
                hovertemplate=(
                    f"{placement}, %{{customdata[2]}} regime: %{{customdata[0]}} in "
                    "%{customdata[1]}<extra>model</extra>"
                ),
            )
        )
        for r in model.regimes[:-1]:
            fig.add_shape(
                type="line", x0=r.max_bytes, x1=r.max_bytes, xref="x", y0=0, y1=1, yref="paper",
                line={"color": colour, "dash": "dot", "width": 1},
            )  # fmt: skip
    fig.update_xaxes(type="log")
    fig.update_yaxes(type="log")
    return _layout(fig, title, "message size (bytes)", "seconds")


def halo(rows: Sequence[dict[str, Any]]) -> go.Figure:
    """Measured halo exchanges (whole, and inside MPI) against the model, per configuration
    (:func:`benchdb.comm.halo_validation.halo_validation`'s rows, named by their label)."""
    names = [r["label"] for r in rows]
    fig = go.Figure()
    for key, label in (
        ("measured_total_s", "measured, whole exchange"),
        ("measured_mpi_s", "measured, inside MPI"),
        ("predicted_s", "model"),
    ):
        values = [r[key] for r in rows]
        fig.add_trace(
            go.Bar(
                x=names,
                y=values,
                name=label,
                customdata=np.column_stack(
                    [[r["config"] for r in rows], [fmt_seconds(v) for v in values]]
                ),
                hovertemplate=f"%{{customdata[0]}}<br>{label}: %{{customdata[1]}}<extra></extra>",
            )
        )
    fig.update_yaxes(type="log")
    fig.update_layout(barmode="group")
    return _layout(
        fig, "Halo exchange: model against measured", "local block, halo width, fields", "seconds"
    )
