"""Periodic halo exchange of one staggered field on a Cartesian communicator.

Each shallow-water field has one halo row and one halo column, on the side
given by its staggering (:func:`benchdb.kernels.shallow_model.halo`): a field
whose inner points start at index 1 keeps its halo at 0, a copy of the last
inner row, which on a decomposed grid lives on the *lower* neighbour; one
starting at 0 keeps it at the end, a copy of the *upper* neighbour's first
row.  So an exchange is a one-directional shift per axis (``Sendrecv``),
done X first, then Y with the freshly received halo row included, exactly
as the serial code's row-then-column periodic copy (and POP's two phases,
paper 001 eq. 8).  Along an axis of one rank the shift is a local copy.
"""

from __future__ import annotations

import numpy as np
from mpi4py import MPI

from ...kernels.shallow_model import halo


class HaloExchanger:
    """Exchanges halos of (ml+1) x (nl+1) Fortran-ordered fields of one rank."""

    def __init__(self, cart: MPI.Cartcomm, local_shape: tuple[int, int], dtype: np.dtype) -> None:
        self.cart = cart
        self.dims = tuple(cart.Get_topo()[0])
        self.neighbours = [cart.Shift(axis, 1) for axis in (0, 1)]  # (lower, upper)
        nl = local_shape[1]
        # rows (axis 0) are strided in Fortran order: packed through these buffers
        self.row_send = np.empty(nl + 1, dtype=dtype)
        self.row_recv = np.empty(nl + 1, dtype=dtype)

    def exchange(self, a: np.ndarray, offset: tuple[int, int]) -> tuple[float, float]:
        """Fill ``a``'s halo row then column; seconds spent on each axis."""
        times = []
        for axis in (0, 1):
            t0 = MPI.Wtime()
            self._shift(a, axis, offset[axis])
            times.append(MPI.Wtime() - t0)
        return times[0], times[1]

    def _shift(self, a: np.ndarray, axis: int, offset: int) -> None:
        hi, si = halo(offset, a.shape[axis] - 1)
        if self.dims[axis] == 1:
            if axis == 0:
                a[hi, :] = a[si, :]
            else:
                a[:, hi] = a[:, si]
            return
        lower, upper = self.neighbours[axis]
        # halo at the low end (offset 1) comes from the lower neighbour, and vice versa
        dest, source = (upper, lower) if offset == 1 else (lower, upper)
        if axis == 0:
            self.row_send[...] = a[si, :]
            self.cart.Sendrecv(self.row_send, dest, 0, self.row_recv, source, 0)
            a[hi, :] = self.row_recv
        else:
            self.cart.Sendrecv(a[:, si], dest, 1, a[:, hi], source, 1)
