"""Whole-run prediction of the distributed shallow-water model (paper 001 section 3-5).

* :mod:`.decomposition` -- px x py decompositions of a global grid;
* :mod:`.context` -- the loop curves' timing context (one or P busy processes a node);
* :mod:`.shallow_app` -- what one step does: loops, exchanged fields, message sizes;
* :mod:`.model` -- ``predict_app``: per-rank loops from the footprint lookup plus
  halo exchanges and reductions from the communication model;
* :mod:`.scenario` -- enumerate and rank decompositions and rank counts;
* :mod:`.energy` -- RAPL counters, or a power model, for energy to solution;
* :mod:`.measured_runs` -- the measured runs (``app_run`` rows) as DataFrames.

Nothing here imports numba or the collectors.
"""

from .context import LoopContext
from .decomposition import Decomposition, decompositions, parse_decomposition
from .model import AppCase, AppPrediction, ExchangeSource, ModelOptions, Scaling, predict_app

__all__ = [
    "AppCase",
    "AppPrediction",
    "Decomposition",
    "ExchangeSource",
    "LoopContext",
    "ModelOptions",
    "Scaling",
    "decompositions",
    "parse_decomposition",
    "predict_app",
]
