"""Communication figure: measured against modelled, ping-pong per placement and halo exchanges."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ..comm.params import CommParams


def comm_fits(frame: pd.DataFrame, params: CommParams, halo_rows: list[dict[str, Any]]) -> Figure:
    """Ping-pong medians per placement with the piecewise postal fit (paper 001 eq. 10,
    paper 002 eq. 1) and its regime boundaries; measured halo exchanges against the model."""
    fig = Figure(figsize=(12, 4.5))
    axes = fig.subplots(1, 2)
    ax = axes[0]
    pp = frame[frame.benchmark == "pingpong"]
    for placement, g in pp.groupby("placement"):
        (line,) = ax.loglog(g.message_bytes, g.t_median, "o", label=f"{placement} measured")
        if placement in params.postal:
            model = params.postal[placement]
            n = np.unique(np.geomspace(1, g.message_bytes.max(), 400).astype(int))
            ax.loglog(n, [model.time(x) for x in n], "-", color=line.get_color(),
                      label=f"{placement} piecewise postal")  # fmt: skip
            for r in model.regimes[:-1]:
                ax.axvline(r.max_bytes, color=line.get_color(), ls=":", lw=0.8)
    ax.set(xlabel="message size (bytes)", ylabel="one-way time (s)", title="ping-pong")
    ax.legend(fontsize=8)
    ax = axes[1]
    if halo_rows:
        x = np.arange(len(halo_rows))
        ax.bar(x - 0.27, [r["measured_total_s"] for r in halo_rows], 0.27, label="measured, whole")
        ax.bar(x, [r["measured_mpi_s"] for r in halo_rows], 0.27, label="measured, in MPI")
        ax.bar(x + 0.27, [r["predicted_s"] for r in halo_rows], 0.27, label="model")
        ax.set_xticks(x, [r["label"] for r in halo_rows], rotation=30,
                      ha="right", fontsize=7)  # fmt: skip
        ax.set_yscale("log")
        ax.legend(fontsize=8)
    ax.set(ylabel="seconds per exchange", title="2D halo exchange (X then Y)")
    return fig
