"""Each measured shape left out and answered by the rest: the answer path's own error.

``benchdb validate`` reports these errors beside the repeat noise (paper 003
Fig. 4's cross-validation, on the whole answer path of ``predict`` rather than
the interpolation alone), and ``benchdb refine`` measures new sizes where they
exceed it: both read them from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .curve import median_rate
from .lookup import Lookup
from .noise import RepeatNoise, repeat_noise, retest_noise


@dataclass(frozen=True)
class Checked:
    """One checked point: its error, what it is, its repeat noise, and its
    test-retest scatter where separate collections measured it."""

    error_pct: float
    about: dict[str, Any]  # shape, footprint_bytes (flags, layer where known)
    noise: RepeatNoise | None
    retest: RepeatNoise | None = None


def error_pct(measured: Any, predicted: Any) -> Any:
    """``100 (T_pred / T_meas - 1) = 100 (P_meas / P_pred - 1)``: the error in predicted time."""
    return 100.0 * (np.asarray(measured) / np.asarray(predicted) - 1.0)


def shape_rows(lookup: Lookup) -> dict[str, list[Mapping[str, Any]]]:
    """The lookup's measurements grouped by shape key, in stored order."""
    by_shape: dict[str, list[Mapping[str, Any]]] = {}
    for r in lookup.selection.rows:
        by_shape.setdefault(str(r["shape_key"]), []).append(r)
    return by_shape


def answer_path_loo(lookup: Lookup) -> tuple[list[Checked], int]:
    """Each measured shape of ``lookup`` left out (all its measurements), every layer
    refitted without it (:meth:`.lookup.Lookup.without`) and asked for it; also the
    count of shapes left out of the check because the rest would extrapolate to them."""
    out, outside = [], 0
    for key, rows in shape_rows(lookup).items():
        held = lookup.without({key})
        if len(held.curve) < lookup.method.min_points:
            continue
        answer = held.evaluate(np.array([list(rows[0]["shape"])], dtype=float))
        if answer.extrapolated[0]:
            outside += 1
            continue
        measured = median_rate(rows, lookup.basis.work_per_point)
        about = {
            "shape": key,
            "footprint_bytes": float(rows[0]["footprint_bytes"]),
            "layer": str(answer.layer[0]),
        }
        out.append(
            Checked(
                float(error_pct(measured, answer.rate[0])),
                about,
                repeat_noise(rows),
                retest_noise(rows),
            )
        )
    return out, outside
