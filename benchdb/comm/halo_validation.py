"""Measured halo exchanges against the model's prediction.

For each measured ``halo2d`` point the prediction of :func:`.halo_model.predict_halo2d`
(with the run's decomposition, block, halo width, fields and its measured
rank-to-node mapping, or ranks per node for points stored without one)
is compared with the measured time spent inside MPI (post to ``Waitall``, both
phases, slowest rank) -- what paper 001 eq. 8/10 models -- and with the whole
exchange, which also packs, unpacks and copies locally.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .halo_model import predict_halo2d
from .params import CommParams


def _label(p: dict[str, Any]) -> str:
    """A configuration's short name in figures: ``64x64 h1 f3`` (block, halo, fields)."""
    return f"{p['local'][0]}x{p['local'][1]} h{p['halo']} f{p['fields']}"


def halo_validation(frame: pd.DataFrame, params: CommParams) -> list[dict[str, Any]]:
    """Per measured configuration: its key and short ``label``, the message sizes, the
    model's and the measured seconds, and the relative errors."""
    rows = []
    for r in frame[frame.benchmark == "halo2d"].itertuples():
        p = r.params
        pred = predict_halo2d(
            params,
            tuple(p["decomp"]),
            tuple(p["local"]),
            halo=p["halo"],
            fields=p["fields"],
            word_bytes=p["word_bytes"],
            ranks_per_node=max(1, r.ranks // max(1, r.nodes)),
            node_of=p.get("node_of"),
        )
        mpi = float(np.median(np.add(p["mpi_x_samples"], p["mpi_y_samples"])))
        rows.append(
            {
                "config": r.params_key,
                "label": _label(p),
                "message_bytes_x": p["message_bytes"]["x"],
                "message_bytes_y": p["message_bytes"]["y"],
                "predicted_s": pred.seconds,
                "measured_mpi_s": mpi,
                "measured_total_s": float(r.t_median),
                "rel_error_mpi": (pred.seconds - mpi) / mpi if mpi > 0 else None,
                "rel_error_total": (pred.seconds - r.t_median) / r.t_median,
            }
        )
    return rows
