"""The Python API: predicted loop times for many shapes at once, as a DataFrame.

    >>> from benchdb.db import open_database
    >>> from benchdb.predict import predict
    >>> db = open_database()
    >>> predict(db, "shallow.cu", [(500, 500), (600, 400)], iterations=1000)

Vectorised: once the curve is fitted (or read back from the ``model`` table)
the shapes are evaluated with numpy in one pass.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from .answers import Answers
from .basis import RateBasis, rate_basis, shapes_array
from .lookup import Lookup, prepare_lookup
from .methods import DEFAULT_METHOD

if TYPE_CHECKING:
    from ..db.engine import Database


class LookupOptions(TypedDict, total=False):
    """Which fitted curve answers: the keywords :func:`prepare_lookup` selects data by.

    ``method`` (default :data:`DEFAULT_METHOD`), ``threads`` (1), ``precision``
    (``"float64"``), ``machine`` (a node class: this machine's), ``host`` (one host
    of it: all), ``environment_id`` (the newest),
    ``context`` (the preferred one measured, full-step first).
    """

    method: str
    threads: int
    precision: str
    machine: str | None
    host: str | None
    environment_id: int | None
    context: str | None


def predict_columns(
    db: Database,
    kernel: str,
    shapes: Any,
    *,
    iterations: Any = 1,
    basis: RateBasis | None = None,
    **options: Unpack[LookupOptions],
) -> tuple[Lookup, Answers]:
    """The fitted lookup and its predictions (numpy columns), without pandas.

    ``basis`` is the kernel's :func:`rate_basis` at the options' precision where the
    caller has it already: a prediction reads the kernel's definition and sizes
    the shapes once, and the shapes are checked before a fit is written.
    """
    options.setdefault("method", DEFAULT_METHOD)
    if basis is None:
        basis = rate_basis(kernel, options.get("precision", "float64"), db)
    blocks = basis.blocks(shapes_array(shapes, basis.geometry.ndim))
    lookup = prepare_lookup(db, kernel, basis=basis, **options)
    return lookup, lookup.evaluate(blocks, iterations)


def predict(
    db: Database, kernel: str, shapes: Any, *, iterations: Any = 1, **options: Unpack[LookupOptions]
):  # -> pandas.DataFrame
    """Predicted time of ``kernel`` for each shape (rows of an (n, ndim) array-like).

    Columns: ``shape_0..`` the extents, ``points``, ``footprint_bytes``,
    ``iterations``, ``rate`` (in ``rate_unit``: flop/s, or B/s for data-only
    kernels), ``time_s``, ``uncertainty_rel`` (the samples' spread),
    ``interpolation_rel`` (leave-one-out error, NaN where none), ``extrapolated``, the bracketing
    measured footprints ``lo_footprint_bytes``/``hi_footprint_bytes`` (those of
    blocks with the shape's own rows where ``same_rows``), the
    ``point_flags`` of those points (``noisy``, ``spike``, ``dip``), ``layer`` (which
    layer answered: ``same_rows``, ``aspect`` or ``curve``, :class:`.lookup.AnswerLayer`),
    ``method`` (the curve's),
    ``environment_id`` and the ``model_id`` of the stored fit.  ``options``
    select the curve (:class:`LookupOptions`).
    """
    return predict_columns(db, kernel, shapes, iterations=iterations, **options)[1].frame()
