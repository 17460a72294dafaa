"""Regression tracking (docs/design.md "Regression tracking").

* A/B: :func:`compare_runs` judges every point two runs share by the ratio
  of medians, a bootstrap interval, a Mann–Whitney U test, the separation of
  the samples and a minimum effect (:mod:`.ab`), and every kernel by the
  median of its points' ratios with a two-level bootstrap interval over the
  points and their samples (:mod:`.hierarchical`): the kernel verdict is what
  fails CI.
* History: :func:`kernel_history` runs a pluggable change-point detector
  (:mod:`.detectors`: ``potts`` as in asv, ``zscore`` as in Conbench) over a
  kernel's series and names the run and environment change at each step.
* Baselines: pinned in the data layer, :mod:`benchdb.db.baseline` (with a reason,
  and every reset kept).
"""

from .ab import DEFAULT_ALPHA, DEFAULT_THRESHOLD, PointComparison, compare_samples
from .compare import RunComparison, compare_runs
from .detectors import DETECTORS, Step, get_detector
from .hierarchical import KernelChange, kernel_change
from .history import Series, kernel_history

__all__ = [
    "DEFAULT_ALPHA",
    "DEFAULT_THRESHOLD",
    "DETECTORS",
    "KernelChange",
    "PointComparison",
    "RunComparison",
    "Series",
    "Step",
    "compare_runs",
    "compare_samples",
    "get_detector",
    "kernel_change",
    "kernel_history",
]
