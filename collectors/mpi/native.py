"""Timing loops compiled with numba that call the MPI library directly.

docs/design.md "Measurement method": repetition loops live in compiled code.  A
Python-level ``comm.Send``/``comm.Recv`` costs about a microsecond more than
the C call, which is as large as the intra-node latency itself; so the loops
below call ``MPI_Send``, ``MPI_Isend``, ``MPI_Allreduce``... through ctypes
bindings to the very library mpi4py loaded, from ``@njit`` code, exactly as
a C benchmark would (benchmarks/c_pingpong.c checks this).

The bindings assume the MPICH ABI (integer handles, ``MPI_STATUS_IGNORE`` =
1): MPICH, the mpich wheel, Intel MPI, Cray MPICH and MVAPICH.  Other MPIs are
refused with a clear message.
"""

from __future__ import annotations

import ctypes
import re
from functools import cache

import numpy as np
from mpi4py import MPI
from numba import njit

from benchdb.errors import UserError

from .buffers import page_buffer

STATUS_IGNORE = 1  # (MPI_Status *)1 in mpi.h of the MPICH ABI
_LIBMPI = re.compile(r"^lib(mpi|mpich)[\w-]*\.so")


def _libmpi_path() -> str:
    """The MPI shared library this process has loaded (mpi4py loaded it)."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if _LIBMPI.match(path.rsplit("/", 1)[-1]) and "_abi" not in path:
                return path
    raise UserError("cannot find the MPI library in this process; is mpi4py built against MPICH?")


@cache
def _lib() -> ctypes.CDLL:
    if MPI._sizeof(MPI.Comm) != 4:
        raise UserError(
            f"the compiled MPI timing loops need an MPICH-ABI library, but mpi4py runs on "
            f"{MPI.get_vendor()[0]}; install the mpich wheel (pip install mpich) or use "
            "MPICH, Intel MPI or Cray MPICH"
        )
    return ctypes.CDLL(_libmpi_path())


def _bind(name: str, nargs: int) -> ctypes._CFuncPtr:
    """``int name(...)`` with every argument passed as a 64-bit integer or pointer.

    On x86-64 and AArch64 an ``int`` argument occupies a full register or stack
    slot, so passing handles and counts as ``size_t`` is ABI-compatible.
    """
    fn = getattr(_lib(), name)
    fn.argtypes = [ctypes.c_ssize_t] * nargs
    fn.restype = ctypes.c_int
    return fn


_send = _bind("MPI_Send", 6)
_recv = _bind("MPI_Recv", 7)
_isend = _bind("MPI_Isend", 7)
_irecv = _bind("MPI_Irecv", 7)
_waitall = _bind("MPI_Waitall", 3)
_sendrecv = _bind("MPI_Sendrecv", 12)
_allreduce = _bind("MPI_Allreduce", 6)
_wtime = _lib().MPI_Wtime
_wtime.argtypes = []
_wtime.restype = ctypes.c_double


def datatype(dtype: np.dtype) -> int:
    """The MPI datatype handle of a float64 or float32 array."""
    return {8: MPI.DOUBLE, 4: MPI.FLOAT}[np.dtype(dtype).itemsize].handle


@njit
def sendrecv(sptr, rptr, count, dtype, dest, source, tag, comm):  # type: ignore[no-untyped-def]
    """One ``MPI_Sendrecv`` of ``count`` elements between raw pointers; error code."""
    return _sendrecv(
        sptr, count, dtype, dest, tag, rptr, count, dtype, source, tag, comm, STATUS_IGNORE
    )


def handles(comm: MPI.Comm) -> tuple[int, int, int, int]:
    """(communicator, MPI_BYTE, MPI_DOUBLE, MPI_SUM) handles as integers."""
    return comm.handle, MPI.BYTE.handle, MPI.DOUBLE.handle, MPI.SUM.handle


@njit
def pingpong(buf, nbytes, peer, reps, first, comm, byte):  # type: ignore[no-untyped-def]
    """``reps`` round trips with blocking send/recv (osu_latency's loop); error code."""
    ptr = buf.ctypes.data
    err = 0
    for _ in range(reps):
        if first:
            err |= _send(ptr, nbytes, byte, peer, 1, comm)
            err |= _recv(ptr, nbytes, byte, peer, 1, comm, STATUS_IGNORE)
        else:
            err |= _recv(ptr, nbytes, byte, peer, 1, comm, STATUS_IGNORE)
            err |= _send(ptr, nbytes, byte, peer, 1, comm)
    return err


@njit
def exchange(sbuf, rbuf, nbytes, peer, reps, comm, byte):  # type: ignore[no-untyped-def]
    """``reps`` send-and-receive rounds with ``peer`` (``MPI_Sendrecv``); error code."""
    err = 0
    for _ in range(reps):
        err |= sendrecv(sbuf.ctypes.data, rbuf.ctypes.data, nbytes, byte, peer, peer, 5, comm)
    return err


@njit
def _pack(a, sbuf, x0, x1, y0, y1):  # type: ignore[no-untyped-def]
    i = 0
    for f in range(a.shape[0]):
        for x in range(x0, x1):
            for y in range(y0, y1):
                sbuf[i] = a[f, x, y]
                i += 1


@njit
def _unpack(a, rbuf, x0, x1, y0, y1):  # type: ignore[no-untyped-def]
    i = 0
    for f in range(a.shape[0]):
        for x in range(x0, x1):
            for y in range(y0, y1):
                a[f, x, y] = rbuf[i]
                i += 1


@njit
def halo_exchange(a, h, reps, me, nbr, sbuf, rbuf, req, comm, double, tmpi):  # type: ignore[no-untyped-def]
    """``reps`` POP boundary exchanges of ``a[fields, nx+2h, ny+2h]``; error code.

    Phase X then phase Y (paper 001 section 3.2): two ``MPI_Irecv``, two
    ``MPI_Isend``, one ``MPI_Waitall`` each.  ``nbr`` = (x-lo, x-hi, y-lo,
    y-hi); a neighbour equal to ``me`` is a local copy (POP does not use MPI
    for those).  Y runs after X over the full X extent, so corners arrive too.
    ``tmpi[phase]`` accumulates the seconds spent inside MPI (post to
    ``Waitall``), apart from packing, unpacking and local copies: the part the
    communication model (paper 001 eq. 10) describes.
    """
    nx = a.shape[1] - 2 * h
    ny = a.shape[2] - 2 * h
    err = 0
    for _ in range(reps):
        for phase in range(2):
            lo, hi = nbr[2 * phase], nbr[2 * phase + 1]
            if phase == 0:  # strips along y: send x in [h, 2h) down, [nx, nx+h) up
                n = a.shape[0] * h * ny
                down = (h, 2 * h, h, h + ny)
                up = (nx, nx + h, h, h + ny)
                from_hi = (nx + h, nx + 2 * h, h, h + ny)
                from_lo = (0, h, h, h + ny)
            else:  # strips along x, full extent: corners included
                n = a.shape[0] * h * (nx + 2 * h)
                down = (0, nx + 2 * h, h, 2 * h)
                up = (0, nx + 2 * h, ny, ny + h)
                from_hi = (0, nx + 2 * h, ny + h, ny + 2 * h)
                from_lo = (0, nx + 2 * h, 0, h)
            _pack(a, sbuf[0], down[0], down[1], down[2], down[3])
            _pack(a, sbuf[1], up[0], up[1], up[2], up[3])
            nreq = 0
            tag = 2 * phase
            if hi != me:
                t0 = _wtime()
                err |= _irecv(rbuf[0].ctypes.data, n, double, hi, tag, comm, req[0:].ctypes.data)
                err |= _irecv(
                    rbuf[1].ctypes.data, n, double, lo, tag + 1, comm, req[1:].ctypes.data
                )
                err |= _isend(sbuf[0].ctypes.data, n, double, lo, tag, comm, req[2:].ctypes.data)
                err |= _isend(
                    sbuf[1].ctypes.data, n, double, hi, tag + 1, comm, req[3:].ctypes.data
                )
                nreq = 4
                err |= _waitall(nreq, req.ctypes.data, STATUS_IGNORE)
                tmpi[phase] += _wtime() - t0
                _unpack(a, rbuf[0], from_hi[0], from_hi[1], from_hi[2], from_hi[3])
                _unpack(a, rbuf[1], from_lo[0], from_lo[1], from_lo[2], from_lo[3])
            else:
                _unpack(a, sbuf[0], from_hi[0], from_hi[1], from_hi[2], from_hi[3])
                _unpack(a, sbuf[1], from_lo[0], from_lo[1], from_lo[2], from_lo[3])
    return err


@njit
def allreduce(sbuf, rbuf, reps, comm, double, op):  # type: ignore[no-untyped-def]
    """``reps`` MPI_Allreduce calls of ``sbuf`` (float64) into ``rbuf``; error code."""
    err = 0
    for _ in range(reps):
        err |= _allreduce(sbuf.ctypes.data, rbuf.ctypes.data, sbuf.size, double, op, comm)
    return err


def halo_buffers(fields: int, local: tuple[int, int], h: int) -> tuple[np.ndarray, ...]:
    """Send/receive buffers (2 × largest message) and the request array."""
    nx, ny = local
    longest = fields * h * max(ny, nx + 2 * h)
    return (
        page_buffer(2 * 8 * longest, np.float64).reshape(2, longest),
        page_buffer(2 * 8 * longest, np.float64).reshape(2, longest),
        np.zeros(4, dtype=np.int32),
    )
