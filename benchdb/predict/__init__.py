"""The predictor: loop times by memory-footprint lookup (paper 003 §V-VI).

``predict(db, kernel, shapes, ...) -> DataFrame`` is the entry point; the
interpolation methods live in :mod:`benchdb.predict.methods`, the analytic
baselines (paper 003 eq. 5, roofline, ESCAPE) in
:mod:`benchdb.predict.baselines`, cross-validation in
:mod:`benchdb.predict.validate`.  Nothing here imports numba; scipy and
pandas are imported only by the functions that need them.
"""

from .methods import DEFAULT_METHOD, METHODS
from .predictions import predict, predict_columns

__all__ = ["DEFAULT_METHOD", "METHODS", "predict", "predict_columns"]
