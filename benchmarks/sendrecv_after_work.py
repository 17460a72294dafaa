"""One MPI_Sendrecv after touching W bytes of other data: what an exchange costs inside a code.

The ping-pong and Sendrecv benchmarks time messages back to back, buffers hot
and both ranks in step.  Inside a model the loops between two exchanges
evict the MPI buffers and one rank arrives late; this prints the time inside
one ``MPI_Sendrecv`` of ``--bytes`` after each rank streamed through W bytes
of its own array, for W from nothing to beyond the last-level cache (the
slower rank's mean per exchange).  It is the measurement behind
:mod:`benchdb.collectors.app.exchanges`.

    .venv/bin/mpiexec -n 2 -bind-to core .venv/bin/python benchmarks/sendrecv_after_work.py
"""

from __future__ import annotations

import argparse

import numpy as np
from benchdb.collectors.mpi import native
from benchdb.kernels.clock import seconds, tick
from mpi4py import MPI
from numba import njit

from benchdb.machine import detect_machine


@njit
def _timed(work, sbuf, rbuf, count, reps, peer, comm, dtype):  # type: ignore[no-untyped-def]
    """Ticks spent in ``reps`` Sendrecvs, each after one pass of writes over ``work``."""
    inside = 0
    for _ in range(reps):
        for i in range(work.size):
            work[i] += 1.0
        t0 = tick()
        native.sendrecv(sbuf.ctypes.data, rbuf.ctypes.data, count, dtype, peer, peer, 0, comm)
        inside += tick() - t0
    return inside


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bytes", type=int, default=712, help="message size (default: a 88-point row)")
    ap.add_argument("--seconds", type=float, default=0.5, help="target time per work size")
    args = ap.parse_args()
    comm = MPI.COMM_WORLD
    if comm.size != 2:
        raise SystemExit("run with mpiexec -n 2")
    handle, _, double, _ = native.handles(comm)
    peer = 1 - comm.rank
    count = max(1, args.bytes // 8)
    sbuf, rbuf = np.ones(count), np.zeros(count)
    m = detect_machine()
    l1, l2 = m.data_caches()[0].size_bytes, m.cache("L2").size_bytes
    llc = m.last_level_cache().size_bytes
    sizes = [0, 2 * l1, l2 // 2, llc // 8, llc // 2]
    for w in sizes:
        work = np.zeros(max(w // 8, 1))
        _timed(work, sbuf, rbuf, count, 3, peer, handle, double)  # compile, first touch
        comm.Barrier()
        t0 = MPI.Wtime()
        _timed(work, sbuf, rbuf, count, 3, peer, handle, double)
        per_rep = comm.allreduce(MPI.Wtime() - t0, op=MPI.MAX) / 3
        reps = max(10, int(args.seconds / max(per_rep, 1e-7)))
        comm.Barrier()
        inside = seconds(_timed(work, sbuf, rbuf, count, reps, peer, handle, double)) / reps
        slowest = comm.reduce(inside, op=MPI.MAX, root=0)
        if comm.rank == 0:
            print(f"work {w / 1024:9.0f} KiB   Sendrecv of {8 * count} B: {1e6 * slowest:7.2f} us")


if __name__ == "__main__":
    main()
