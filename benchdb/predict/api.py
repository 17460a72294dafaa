"""The Python API: predicted loop times for many shapes at once, as a DataFrame.

    >>> from benchdb.db import open_database
    >>> from benchdb.predict import predict
    >>> db = open_database()
    >>> predict(db, "shallow.cu", [(500, 500), (600, 400)], iterations=1000)

Vectorised: once the curve is fitted (or read back from the ``model`` table)
the shapes are evaluated with numpy in one pass.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .basis import rate_basis, shapes_array
from .lookup import Lookup, prepare_lookup
from .methods import DEFAULT_METHOD


def predict_columns(
    db: Any,
    kernel: str,
    shapes: Any,
    *,
    iterations: Any = 1,
    threads: int = 1,
    method: str = DEFAULT_METHOD,
    precision: str = "float64",
    machine: str | None = None,
    environment_id: int | None = None,
    context: str | None = None,
) -> tuple[Lookup, dict[str, Any]]:
    """The fitted lookup and the prediction columns (numpy arrays), without pandas."""
    arr = shapes_array(shapes, rate_basis(kernel, precision).geometry.ndim)
    lookup = prepare_lookup(
        db,
        kernel,
        method=method,
        threads=threads,
        precision=precision,
        machine=machine,
        environment_id=environment_id,
        context=context,
        shapes=arr,
    )
    return lookup, lookup.evaluate(arr, iterations)


def predict(
    db: Any,
    kernel: str,
    shapes: Any,
    *,
    iterations: Any = 1,
    threads: int = 1,
    method: str = DEFAULT_METHOD,
    precision: str = "float64",
    machine: str | None = None,
    environment_id: int | None = None,
    context: str | None = None,
):  # -> pandas.DataFrame
    """Predicted time of ``kernel`` for each shape (rows of an (n, ndim) array-like).

    Columns: ``shape_0..`` the extents, ``points``, ``footprint_bytes``,
    ``iterations``, ``rate`` (in ``rate_unit``: flop/s, or B/s for data-only
    kernels), ``time_s``, ``uncertainty_rel``, ``extrapolated``, the bracketing
    measured footprints ``lo_footprint_bytes``/``hi_footprint_bytes``, the
    ``point_flags`` of those points (``noisy``, ``spike``, ``dip``), ``method``,
    ``environment_id`` and the ``model_id`` of the stored fit.
    """
    import pandas as pd

    _, cols = predict_columns(
        db,
        kernel,
        shapes,
        iterations=iterations,
        threads=threads,
        method=method,
        precision=precision,
        machine=machine,
        environment_id=environment_id,
        context=context,
    )
    n = len(cols["rate"])
    return pd.DataFrame(
        {k: np.broadcast_to(v, n) if np.ndim(v) == 0 else v for k, v in cols.items()}
    )
