"""One block's loops timed inside the distributed step: what a P-rank run executes.

A 1-rank run steps the serial model (:func:`benchdb.kernels.builtin.shallow.step.run_steps`
over every phase, with the periodic boundary phases); a P-rank run steps
:func:`.stepping.distributed_steps`, the same compiled phases in three ranges
with the halo exchanges between them.  The loops do not run at the same speed
both ways: slower the distributed way, and predictions from the serial step's
curves came out too fast (docs/findings/app-loop-curves.md, "The distributed
step's loops").

So the populated curves (:mod:`.populated`), which only P-rank predictions
use, time each point this way: a :class:`RankModel` of the point's block alone
on ``MPI.COMM_SELF``, stepped the distributed way, on every rank at once.  It has
the collectors' ``Prepared`` interface (``run``, ``checksum``).  Its loops are
the run's loops; the boundary phases are not in it (a run has exchanges there,
timed in situ by :mod:`.exchanges`), nor the untimed ``shallow.step``.
"""

from __future__ import annotations

from mpi4py import MPI

from benchdb.app.decomposition import Decomposition

from ...kernels.builtin.shallow.model import step_constants
from ...kernels.builtin.shallow.step import state_checksum
from .worker import RankModel


class DistributedStepPoint:
    """The block ``shape`` stepped as one rank of a distributed run."""

    def __init__(self, shape: tuple[int, int], precision: str) -> None:
        self._cart = MPI.COMM_SELF.Create_cart([1, 1], periods=[True, True], reorder=False)
        self.model = RankModel(self._cart, shape, Decomposition(1, 1), precision, distributed=True)
        self.model.steps(step_constants(precision, first=True), 1)  # forward; compiles
        self._leapfrog = step_constants(precision, first=False)

    def run(self, repetitions: int) -> dict[str, float]:
        """``repetitions`` timed steps; seconds summed over them per ``shallow.<loop>``."""
        self.model.reset()
        self.model.steps(self._leapfrog, repetitions)
        return self.model.loop_seconds(repetitions)

    def checksum(self) -> float:
        return state_checksum(self.model.state)

    def close(self) -> None:
        self._cart.Free()
