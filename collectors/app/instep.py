"""One block's loops timed inside the distributed step: what a P-rank run executes.

A 1-rank run steps the serial model (:func:`benchdb.kernels.shallow.run_steps`
over every phase, with the periodic boundary phases); a P-rank run steps
:func:`.stepping.distributed_steps`, the same compiled phases in three ranges
with the halo exchanges between them.  The loops do not run at the same speed
both ways.  Measured here (2-core EPYC, ``python benchmarks/split_step.py
--block 35x70 --rounds 5`` and ``--block 70x35``: one process, no MPI traffic,
the distributed step on a 1x1 decomposition whose exchanges are local halo
copies, against the serial step, alternated): every loop 1.01-1.15x slower
the distributed way (cu 1.08/1.06, z 1.08/1.15, pnew 1.13/1.08, copy
1.10/1.09), 1.06x summed over the loops.  Every 2-rank run on the L2 grid was
slower than its prediction from the serial step's populated curve, in three
validations and in every loop (cu 16-23 %, cv 11-17 %, the rest 0-10 %).

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

from ...kernels.shallow import state_checksum
from ...kernels.shallow_model import step_constants
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
