"""A sample's evidence: whether the operating system says it measured the code.

A sample taken while the measuring thread waited for its CPU, or while the
hypervisor gave its virtual CPU to another guest, measured the neighbour.  The
collectors read the evidence (:mod:`benchdb.collectors.probes`); this module
holds what it is and how it is judged, for every reader of stored samples.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

LOST_FRACTION = 0.01
"""A sample that lost more than this share of its wall time to other tasks is disturbed
(chosen from measurements: docs/findings/disturbance.md)."""


@dataclass(frozen=True)
class Evidence:
    """One sample's window as the operating system accounted it (seconds, counts).

    ``wait_s`` is None where the kernel keeps no run-queue delay (no schedstat, a
    child process); ``steal_s`` None where it reports no steal.  ``others_busy_s``:
    how long the CPUs the sample could not run on were busy (None: no such CPU, or
    recorded before it was read); evidence of a neighbour that takes no CPU time from
    the sample, not a reason to set it aside.
    """

    wall_s: float
    cpu_s: float
    wait_s: float | None
    nivcsw: int
    steal_s: float | None
    lost_s: float
    others_busy_s: float | None = None

    @property
    def disturbed(self) -> bool:
        return self.lost_s > LOST_FRACTION * self.wall_s

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Evidence:
        return cls(**{k: data.get(k) for k in cls.__dataclass_fields__})


def lost_share(evidence: Sequence[dict[str, Any] | None]) -> float | None:
    """The median share of its wall time a sample lost, over the stored ``evidence``
    records that have one; None when none does (collected without evidence)."""
    shares = [e["lost_s"] / e["wall_s"] for e in evidence if e and e.get("wall_s")]
    return statistics.median(shares) if shares else None
