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

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names, for type checkers and editors; loaded on use below
    from .ab import DEFAULT_ALPHA, DEFAULT_THRESHOLD, PointComparison, compare_samples
    from .compare import RunComparison, compare_runs
    from .detectors import DETECTORS, Step, get_detector
    from .hierarchical import KernelChange, kernel_change
    from .history import Series, kernel_history

_EXPORTS = {
    "DEFAULT_ALPHA": ".ab",
    "DEFAULT_THRESHOLD": ".ab",
    "PointComparison": ".ab",
    "compare_samples": ".ab",
    "RunComparison": ".compare",
    "compare_runs": ".compare",
    "DETECTORS": ".detectors",
    "Step": ".detectors",
    "get_detector": ".detectors",
    "KernelChange": ".hierarchical",
    "kernel_change": ".hierarchical",
    "Series": ".history",
    "kernel_history": ".history",
}
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


def __getattr__(name: str) -> Any:
    """Each name from its module on first use (PEP 562): ``history`` needs no scipy, whose
    statistics take a second to import that the A/B comparison alone uses."""
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name], __name__), name)
