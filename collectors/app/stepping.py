"""The distributed shallow-water time step, compiled whole: loops and halo exchanges.

One call runs ``steps`` leapfrog steps of one rank: the serial benchmark's
compiled phases (:func:`benchdb.kernels.builtin.shallow.step.drive`, over phase
ranges, per-phase ticks) with the seven halo exchanges (:mod:`.staggered_halo`) in
place of the two periodic boundary updates -- cu, cv, z, h after the first
four loops (Fortran loops 110/115), unew, vnew, pnew after the next three
(210/215).  Nothing returns to Python inside a step, so the measured run has
no interpreter time that the application model would have to guess.
"""

from __future__ import annotations

from numba import njit

from ...kernels.builtin.shallow.step import N_PHASES, PERIODIC_CVZH, PERIODIC_NEW, PHASE, drive
from .staggered_halo import exchange

N_FIRST = 4  # cu, cv, z, h: the order of benchdb.app.shallow_app.EXCHANGED_FIELDS
_SERIAL = PHASE.serial


@njit
def distributed_steps(s, c, steps, ticks, xticks, offsets, nbr, me, send, recv, comm, dtype):  # type: ignore[no-untyped-def]
    """``steps`` steps of one rank; loop ticks into ``ticks``, exchange ticks into
    ``xticks[field, axis]``; ``offsets[field]`` is the field's staggering.  MPI error code."""
    err = 0
    phase = _SERIAL
    for _ in range(steps):
        drive(phase, s, c, 1, 0, PERIODIC_CVZH, True, ticks)
        first = (s.cu, s.cv, s.z, s.h)
        for f in range(N_FIRST):
            err |= exchange(first[f], offsets[f], f, nbr, me, send, recv, comm, dtype, xticks)
        drive(phase, s, c, 1, PERIODIC_CVZH + 1, PERIODIC_NEW, True, ticks)
        second = (s.unew, s.vnew, s.pnew)
        for f in range(3):
            slot = N_FIRST + f
            err |= exchange(second[f], offsets[slot], slot, nbr, me, send, recv, comm, dtype,
                            xticks)  # fmt: skip
        drive(phase, s, c, 1, PERIODIC_NEW + 1, N_PHASES, True, ticks)
    return err
