"""Periodic halo exchange of the staggered shallow-water fields, in compiled code.

Each shallow-water field has one halo row and one halo column, on the side
given by its staggering (:func:`benchdb.kernels.builtin.shallow.model.halo`): a field
whose inner points start at index 1 keeps its halo at 0, a copy of the last
inner row, which on a decomposed grid lives on the *lower* neighbour; one
starting at 0 keeps it at the end, a copy of the *upper* neighbour's first
row.  So an exchange is a one-directional shift per axis (``MPI_Sendrecv``),
done X first, then Y with the freshly received halo row included, exactly as
the serial code's row-then-column periodic copy (and POP's two phases, paper
001 eq. 8).  Along an axis of one rank the shift is a local copy.

The exchange runs in compiled code and calls MPI directly
(:mod:`benchdb.collectors.mpi.native`), as the Fortran model calls it: a
Python-level ``Sendrecv`` costs microseconds of interpreter time per call,
as much as the message itself, and no model of the communication has that
term.  Fields are Fortran-ordered, so a row (axis 0) is strided and goes
through a packing buffer; a column is contiguous and is sent in place.
"""

from __future__ import annotations

from numba import njit

from ...kernels.builtin.shallow.model import halo
from ...kernels.clock import tick
from ..mpi.native import sendrecv

_halo = njit(halo)  # the serial model's (halo index, source index) rule, compiled


@njit
def _partners(offset, lower, upper):  # type: ignore[no-untyped-def]
    """(destination, source): a halo at the low end (offset 1) comes from below."""
    return (upper, lower) if offset == 1 else (lower, upper)


@njit
def _shift_rows(a, offset, lower, upper, me, send, recv, comm, dtype):  # type: ignore[no-untyped-def]
    """Fill the halo row (axis 0) of ``a``; MPI error code."""
    hi, si = _halo(offset, a.shape[0] - 1)
    n = a.shape[1]
    if lower == me:
        for j in range(n):
            a[hi, j] = a[si, j]
        return 0
    dest, source = _partners(offset, lower, upper)
    for j in range(n):
        send[j] = a[si, j]
    err = sendrecv(send.ctypes.data, recv.ctypes.data, n, dtype, dest, source, 0, comm)
    for j in range(n):
        a[hi, j] = recv[j]
    return err


@njit
def _shift_columns(a, offset, lower, upper, me, comm, dtype):  # type: ignore[no-untyped-def]
    """Fill the halo column (axis 1) of ``a``, halo row included; MPI error code."""
    hj, sj = _halo(offset, a.shape[1] - 1)
    m = a.shape[0]
    if lower == me:
        for i in range(m):
            a[i, hj] = a[i, sj]
        return 0
    dest, source = _partners(offset, lower, upper)
    base, stride = a.ctypes.data, a.strides[1]
    return sendrecv(base + sj * stride, base + hj * stride, m, dtype, dest, source, 1, comm)


@njit
def exchange(a, offset, slot, nbr, me, send, recv, comm, dtype, ticks):  # type: ignore[no-untyped-def]
    """Rows then columns of one field; ticks of each added to ``ticks[slot, axis]``."""
    t0 = tick()
    err = _shift_rows(a, offset[0], nbr[0], nbr[1], me, send, recv, comm, dtype)
    t1 = tick()
    err |= _shift_columns(a, offset[1], nbr[2], nbr[3], me, comm, dtype)
    t2 = tick()
    ticks[slot, 0] += t1 - t0
    ticks[slot, 1] += t2 - t1
    return err
