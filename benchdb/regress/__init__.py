"""Regression tracking (docs/design.md "Regression tracking").

* A/B: :func:`compare_runs` judges every point two runs share by the ratio
  of medians, a bootstrap interval, a Mann–Whitney U test and a minimum effect
  (:mod:`.ab` documents the rules and thresholds).
* History: :func:`kernel_history` runs a pluggable change-point detector
  (:mod:`.detectors`: ``potts`` as in asv, ``zscore`` as in Conbench) over a
  kernel's series and names the run and environment change at each step.
* Baselines: :func:`set_baseline`, :func:`show_baselines`.
"""

from .ab import DEFAULT_ALPHA, DEFAULT_THRESHOLD, PointComparison, compare_samples
from .baseline import set_baseline, show_baselines
from .compare import RunComparison, compare_runs
from .detectors import DETECTORS, Step, get_detector
from .history import Series, kernel_history

__all__ = [
    "DEFAULT_ALPHA",
    "DEFAULT_THRESHOLD",
    "DETECTORS",
    "PointComparison",
    "RunComparison",
    "Series",
    "Step",
    "compare_runs",
    "compare_samples",
    "get_detector",
    "kernel_history",
    "set_baseline",
    "show_baselines",
]
