"""Whole-run prediction of a distributed application (paper 001 section 3-5): benchdb's
own shallow-water model, or a user's program described by its spec.

* :mod:`.application` -- what the model needs of an application: its step's loops,
  its halo exchanges and reductions;
* :mod:`.program_app` -- a user's program as such an application (its spec's
  ``[parallel]`` section) and its runs checked against what it can run;
* :mod:`.decomposition` -- px x py decompositions of a global grid;
* :mod:`.context` -- the loop curves' timing context (one or P busy processes a node);
* :mod:`.shallow_app` -- what one step does: loops, exchanged fields, message sizes;
* :mod:`.model` -- ``predict_app``: per-rank loops from the footprint lookup plus
  halo exchanges and reductions from the communication model;
* :mod:`.scenario` -- enumerate and rank decompositions and rank counts;
* :mod:`.energy` -- RAPL counters, or a power model, for energy to solution;
* the measured runs (``app_run`` rows) are stored and read by :mod:`benchdb.db.app_runs`.

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
