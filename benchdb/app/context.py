"""The timing context of an application's loop curves: how many processes of a node were busy.

Paper 001 (section 4) keeps separate per-cell compute curves for one and for
several processes per node, since ranks on one node share memory bandwidth and
the last-level cache.  The measurements store which in their ``context``
column: ``fullstep`` (the built-in shallow loops timed inside the serial time
step, one process) or ``fullstep:ppnP`` (P processes busy at once, each
stepping its block as a P-rank run does); ``program`` (a user's program's
loops, timed by its own timers, one process) or ``program:ppnP`` (P copies of
the program at once, one a core).  :class:`LoopContext` is that label as a
value, so that no caller builds or splits the string itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

FULLSTEP = "fullstep"  # the shallow loops, timed inside the whole time step
PROGRAM = "program"  # a user's program's loops, timed by its own timers inside its step
CURVES = (FULLSTEP, PROGRAM)
_CONTEXT_RE = re.compile(r"(fullstep|program)(?::ppn([2-9]|[1-9][0-9]+))?")


@dataclass(frozen=True)
class LoopContext:
    """The loop curves of a node with ``ranks_per_node`` busy processes (1: one process),
    of the built-in model (``curves`` :data:`FULLSTEP`) or of a user's program
    (:data:`PROGRAM`)."""

    ranks_per_node: int = 1
    curves: str = FULLSTEP

    def __post_init__(self) -> None:
        if self.ranks_per_node < 1:
            raise ValueError(f"ranks_per_node must be at least 1, got {self.ranks_per_node}")
        if self.curves not in CURVES:
            raise ValueError(f"curves must be one of {CURVES}, got {self.curves!r}")

    @classmethod
    def for_ranks(cls, ranks_per_node: int, curves: str = FULLSTEP) -> LoopContext:
        """The curves a run with ``ranks_per_node`` ranks on a node uses (at least one)."""
        return cls(max(1, ranks_per_node), curves)

    @classmethod
    def parse(cls, text: str) -> LoopContext:
        """``fullstep`` or ``program`` -> one process, ``...:ppnP`` -> P; ValueError on
        anything else."""
        found = _CONTEXT_RE.fullmatch(text)
        if found is None:
            raise ValueError(
                f"not a loop-curve context: {text!r} (fullstep, program, or either with :ppnP)"
            )
        return cls(int(found[2] or 1), found[1])

    @property
    def populated(self) -> bool:
        return self.ranks_per_node > 1

    def __str__(self) -> str:
        return f"{self.curves}:ppn{self.ranks_per_node}" if self.populated else self.curves
