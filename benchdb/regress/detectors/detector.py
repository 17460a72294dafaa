"""What a change-point detector is: a function of a series that returns its steps.

Detectors are pluggable (docs/design.md "Regression tracking"): each module in
this package defines one class with a ``name``, documented thresholds as
constructor arguments, and ``detect(values) -> list[Step]``, and registers the
class in :data:`DETECTORS` (:mod:`benchdb.plugin_registry`).  The series is
a benchmark's median time per run, oldest first; a :class:`Step` at index
``i`` means the level changed between run ``i - 1`` and run ``i``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from ...plugin_registry import Registry
from ...verdicts import Verdict

DEFAULT_MIN_CHANGE = 0.05
"""Steps smaller than this relative change (5 %) are not reported, as in ``compare``."""


@dataclass(frozen=True)
class Step:
    """A level change at ``index``: the series goes from ``before`` to ``after``.

    ``before`` and ``after`` are the detector's estimates of the level on each
    side (segment medians for Potts, the lookback mean and the new value for
    the z-score); ``score`` is the detector's own strength measure.
    """

    index: int
    before: float
    after: float
    score: float

    @property
    def change(self) -> float:
        """Relative change ``after / before - 1``: positive means slower."""
        return self.after / self.before - 1.0

    @property
    def direction(self) -> str:
        return Verdict.SLOWER if self.after > self.before else Verdict.FASTER

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "change": self.change, "direction": self.direction}


class Detector(Protocol):
    name: str
    min_change: float

    def detect(self, values: Sequence[float]) -> list[Step]:
        """The steps of ``values`` (oldest first), each larger than ``min_change``."""


DETECTORS: Registry[type[Detector]] = Registry("detector")
"""The detector classes by name, as ``--detector`` chooses them; an instance carries the
thresholds (:func:`benchdb.regress.detectors.get_detector`)."""
