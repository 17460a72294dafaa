"""The answers of one lookup for many shapes: numpy columns, typed.

:meth:`.lookup.Lookup.evaluate` fills them in one vectorised pass; the
callers read them as attributes, or reshape them here: a ``DataFrame`` for the
Python API (:func:`benchdb.predict.predict`), JSON-able rows for ``benchdb
predict``.  Column meanings are those of :func:`benchdb.predict.predict`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Answers:
    """One entry per queried shape in every array; the scalars hold for all of them."""

    shapes: np.ndarray  # (n, ndim): the columns shape_0, shape_1, ...
    kernel: str
    points: np.ndarray
    footprint_bytes: np.ndarray
    iterations: np.ndarray
    threads: int
    precision: str
    method: str
    layer: np.ndarray  # AnswerLayer values
    rate: np.ndarray  # in rate_unit
    rate_unit: str
    time_s: np.ndarray
    uncertainty_rel: np.ndarray
    interpolation_rel: np.ndarray  # NaN where none
    extrapolated: np.ndarray
    log_aspect: np.ndarray
    aspect_extrapolated: np.ndarray
    same_rows: np.ndarray
    lo_footprint_bytes: np.ndarray
    hi_footprint_bytes: np.ndarray
    point_flags: np.ndarray
    environment_id: int
    model_id: int | None

    def __len__(self) -> int:
        return len(self.shapes)

    def columns(self) -> dict[str, Any]:
        """Every column by name (``shape_0..`` first), the scalars once."""
        out: dict[str, Any] = {f"shape_{d}": self.shapes[:, d] for d in range(self.shapes.shape[1])}
        out.update((f.name, getattr(self, f.name)) for f in fields(self) if f.name != "shapes")
        return out

    def frame(self):  # -> pandas.DataFrame
        """One row per shape, the scalars repeated."""
        import pandas as pd

        n = len(self)
        return pd.DataFrame(
            {k: np.broadcast_to(v, n) if np.ndim(v) == 0 else v for k, v in self.columns().items()}
        )

    def rows(self) -> list[dict[str, Any]]:
        """One dict per shape with plain Python flags and ``shape`` as 'MxN' (what
        ``benchdb predict`` prints; JSON has no NaN, so a missing ``interpolation_rel``
        is None)."""
        cols = {k: v for k, v in self.columns().items() if not k.startswith("shape_")}
        out = []
        for i in range(len(self)):
            row = {k: v[i] if isinstance(v, np.ndarray) else v for k, v in cols.items()}
            row["shape"] = "x".join(str(int(v)) for v in self.shapes[i])
            row["extrapolated"] = bool(row["extrapolated"])
            row["aspect_extrapolated"] = bool(row["aspect_extrapolated"])
            row["same_rows"] = bool(row["same_rows"])
            row["layer"] = str(row["layer"])
            row["log_aspect"] = float(row["log_aspect"])
            interp = float(row["interpolation_rel"])
            row["interpolation_rel"] = interp if math.isfinite(interp) else None
            out.append(row)
        return out
