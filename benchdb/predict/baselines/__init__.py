"""Analytic baselines the lookup is judged against (paper 003 §IV; ESCAPE D3.5).

What a baseline is (:class:`.baseline_model.Baseline`) and the registry :data:`BASELINES`
are in :mod:`.baseline_model`; each module defines one baseline and registers it.  The
order of the imports here is the order the names are listed in.
"""

from __future__ import annotations

# isort: off
from . import eq5, roofline, escape  # noqa: F401 (importing registers the baseline)

# isort: on
from .baseline_model import BASELINES, Baseline

__all__ = ["BASELINES", "Baseline"]
