"""Change-point detectors for benchmark histories, by name.

``potts``: an L1 step fit with the number of steps chosen by an information
criterion (asv); ``zscore``: each new value against the lookback
distribution (Conbench).  See each module for its thresholds.
"""

from __future__ import annotations

from typing import Any

from ...errors import UserError
from .base import DEFAULT_MIN_CHANGE, Detector, Step
from .potts import PottsDetector
from .zscore import ZScoreDetector

DETECTORS: dict[str, type[PottsDetector] | type[ZScoreDetector]] = {
    PottsDetector.name: PottsDetector,
    ZScoreDetector.name: ZScoreDetector,
}


def get_detector(name: str, **params: Any) -> Detector:
    """A detector by name with its thresholds; ``UserError`` listing valid names."""
    try:
        cls = DETECTORS[name]
    except KeyError:
        raise UserError(
            f"unknown detector {name!r}; choose one of: {', '.join(DETECTORS)}"
        ) from None
    return cls(**params)


__all__ = ["DEFAULT_MIN_CHANGE", "DETECTORS", "Detector", "Step", "get_detector"]
