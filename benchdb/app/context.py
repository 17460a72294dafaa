"""The timing context of the shallow loop curves: how many processes of a node were busy.

Paper 001 (section 4) keeps separate per-cell compute curves for one and for
several processes per node, since ranks on one node share memory bandwidth and
the last-level cache.  The measurements store which in their ``context``
column: ``fullstep`` (the loops timed inside the serial time step, one
process) or ``fullstep:ppnP`` (P processes busy at once, each stepping its
block as a P-rank run does).  :class:`LoopContext` is that label as a value,
so that no caller builds or splits the string itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

FULLSTEP = "fullstep"  # the shallow loops, timed inside the whole time step
PROGRAM = "program"  # a user's program's loops, timed by its own timers inside its step
_POPULATED = f"{FULLSTEP}:ppn"
_POPULATED_RE = re.compile(re.escape(_POPULATED) + r"([2-9]|[1-9][0-9]+)")


@dataclass(frozen=True)
class LoopContext:
    """The loop curves of a node with ``ranks_per_node`` busy processes (1: one process)."""

    ranks_per_node: int = 1

    def __post_init__(self) -> None:
        if self.ranks_per_node < 1:
            raise ValueError(f"ranks_per_node must be at least 1, got {self.ranks_per_node}")

    @classmethod
    def for_ranks(cls, ranks_per_node: int) -> LoopContext:
        """The curves a run with ``ranks_per_node`` ranks on a node uses (at least one)."""
        return cls(max(1, ranks_per_node))

    @classmethod
    def parse(cls, text: str) -> LoopContext:
        """``fullstep`` -> one process, ``fullstep:ppnP`` -> P; ValueError on anything else."""
        if text == FULLSTEP:
            return cls()
        populated = _POPULATED_RE.fullmatch(text)
        if populated:
            return cls(int(populated[1]))
        raise ValueError(f"not a loop-curve context: {text!r} (fullstep or fullstep:ppnP)")

    @property
    def populated(self) -> bool:
        return self.ranks_per_node > 1

    def __str__(self) -> str:
        return f"{_POPULATED}{self.ranks_per_node}" if self.populated else FULLSTEP
