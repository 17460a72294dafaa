"""The shallow-water application as the model sees it: what one time step does.

docs/design.md "Whole application" and paper 003 Listing 1: per step, ten update
loops (Table I), three copies, and seven periodic boundary updates; in the
distributed model each boundary update is a halo exchange of one field.
The seven exchanged fields are the ones the serial code makes periodic
(Fortran loops 110/115 after the first four loops, 210/215 after the next
three): ``cu, cv, z, h`` and ``unew, vnew, pnew``.  u, v, p and the old
fields need none: the time filter and the copies run over the full arrays,
halos included, from fields whose halos are already current.

Every field is staggered so that it has exactly one halo row and one halo
column (:data:`benchdb.kernels.builtin.shallow.model.STAGGER`), so an exchange is a
one-directional shift per axis: X phase first (rows of ``nl + 1`` elements),
then Y phase (columns of ``ml + 1`` elements, halo row included so that the
corner arrives), as POP's two sequential phases (paper 001 eq. 8); the halo
model sizes those messages with :func:`benchdb.comm.halo_model.halo_message_bytes`
(``shift=True``).
"""

from __future__ import annotations

from ..kernels.api import DTYPE_BYTES
from ..kernels.builtin.shallow import SHALLOW_LOOPS
from ..kernels.parallel_spec import HaloSpec
from .application import Application

HALO_WIDTH = 1
LOOP_KERNELS: tuple[str, ...] = tuple(f"shallow.{name}" for name in SHALLOW_LOOPS)
COPY_KERNEL = "shallow.copy"
BOUNDARY_KERNEL = "shallow.boundary"
# Everything the compute side of one step runs, each once per step (N_itr = steps).
STEP_KERNELS: tuple[str, ...] = (*LOOP_KERNELS, COPY_KERNEL)
EXCHANGED_FIELDS: tuple[str, ...] = ("cu", "cv", "z", "h", "unew", "vnew", "pnew")

SHALLOW_APP = Application(
    name="shallow",
    step_kernels=STEP_KERNELS,
    serial_kernels=(BOUNDARY_KERNEL,),
    halo=HaloSpec(EXCHANGED_FIELDS, HALO_WIDTH, None, (True, True), shift=True),
    reduction_count=1,  # the global mass, one float64, every --diag-every steps
    reduction_bytes=DTYPE_BYTES["float64"],
    calibrated=True,
)
"""The built-in model as :mod:`.model` sees it: one step, its exchanges, its reduction."""
