"""Change-point detectors for benchmark histories, by name.

``potts``: an L1 step fit with the number of steps chosen by an information
criterion (asv); ``zscore``: each new value against the lookback
distribution (Conbench).  See each module for its thresholds; each registers
its class in :data:`DETECTORS`, in the order of the imports here.
"""

from __future__ import annotations

from typing import Any

from . import potts, zscore  # noqa: F401 (importing registers the detector)
from .detector import DEFAULT_MIN_CHANGE, DETECTORS, Detector, Step


def get_detector(name: str, **params: Any) -> Detector:
    """A detector by name with its thresholds; ``UserError`` listing valid names."""
    return DETECTORS.get(name)(**params)


__all__ = ["DEFAULT_MIN_CHANGE", "DETECTORS", "Detector", "Step", "get_detector"]
