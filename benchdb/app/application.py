"""What the whole-run model needs to know of an application: its step and its communication.

The model (:mod:`.model`, docs/design.md "Whole application", after paper 001
eq. 1-5) is the same for every stencil application decomposed into px x py
blocks: the loops one step runs, looked up at the local block's shape (paper
003 eq. 8-9); the halo exchanges of one step, priced by the halo model (paper
001 eq. 8-10) from the local edge x halo width x element size; the global
reductions.  :class:`Application` holds exactly those facts, so that benchdb's
built-in shallow-water model (:data:`benchdb.app.shallow_app.SHALLOW_APP`) and
a user's program described by its spec's ``[parallel]`` section
(:func:`benchdb.app.program_app.program_application`) go through one model.
Pure Python: the prediction path imports it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..kernels.api import DTYPE_BYTES
from ..kernels.builtin.shallow import SHALLOW
from ..kernels.geometry import Geometry
from ..kernels.parallel_spec import HaloSpec
from .context import FULLSTEP, LoopContext


@dataclass(frozen=True)
class Application:
    """One application as the whole-run model sees it.

    ``curves``: which loop curves are its (:class:`~.context.LoopContext`): the
    built-in model's or a user's program's, each for one and for P busy processes a
    node.  ``calibrate``: the command that measures the populated ones.
    ``calibrated``: ``benchdb app calibrate`` can time its exchanges in situ
    (:mod:`.exchange_table`, looked up by the local block's footprint under
    ``geometry``); otherwise the halo model prices them.
    """

    name: str  # the ``app_run.application`` of its measured runs
    step_kernels: tuple[str, ...]  # each runs once per step at the local block
    serial_kernels: tuple[str, ...]  # the halo updates of a single rank (no exchanges)
    halo: HaloSpec
    reduction_count: int  # global reductions per reduction interval
    reduction_bytes: int
    curves: str = FULLSTEP
    calibrate: str = "benchdb app calibrate"
    calibrated: bool = False
    geometry: Geometry = SHALLOW

    def kernels(self, ranks: int) -> tuple[str, ...]:
        """The kernels a run on ``ranks`` ranks runs each step."""
        return (*self.step_kernels, *self.serial_kernels) if ranks == 1 else self.step_kernels

    def context(self, ranks_per_node: int, populated: bool) -> str:
        """The curves to look the loops up in: the populated node's where they exist
        and ``populated`` asks for them (paper 001 section 4), else one process's."""
        ranks = ranks_per_node if populated else 1
        return str(LoopContext.for_ranks(ranks, self.curves))

    def element_bytes(self, precision: str) -> int:
        """Bytes of one exchanged element: the spec's, else the precision's."""
        return self.halo.element_bytes or DTYPE_BYTES[precision]

    def serial_description(self) -> str:
        """What a single rank runs instead of exchanges, for the answer's ``comm``."""
        kernels = ", ".join(self.serial_kernels) or "nothing"
        return f"serial halo update ({kernels})"
