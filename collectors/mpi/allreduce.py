"""MPI_Allreduce (sum of float64) over rank counts and sizes.

POP's global sums (paper 001 eq. 3, 9) are measured per processor count; the
rank counts are the powers of two up to P, and P itself, each on the first
ranks of ``MPI_COMM_WORLD``.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from mpi4py import MPI

from . import native
from .buffers import page_buffer
from .collective_timing import measure
from .placement import RankInfo, group_placement
from .results import CommPoint, Skip, point_key


def rank_counts(size: int) -> list[int]:
    counts = {size}
    p = 2
    while p < size:
        counts.add(p)
        p *= 2
    return sorted(counts)


def allreduce(
    comm: MPI.Comm,
    infos: list[RankInfo],
    sizes: list[int],
    samples: int,
    min_time: float,
    skip: Skip,
) -> Iterator[CommPoint]:
    for p in rank_counts(comm.size):
        sub = comm.Split(0 if comm.rank < p else MPI.UNDEFINED, comm.rank)
        placement = group_placement(infos, range(p))
        try:
            for nbytes in sizes:
                count = max(1, nbytes // 8)
                if skip(point_key("allreduce", p, 1, placement, count * 8, "")):
                    continue
                sbuf, rbuf = page_buffer(8 * count, np.float64), page_buffer(8 * count, np.float64)
                sbuf[:] = 1.0
                handle = native.handles(sub) if sub != MPI.COMM_NULL else None

                def run(reps: int, handle=handle, sbuf=sbuf, rbuf=rbuf) -> float:  # type: ignore[no-untyped-def]
                    if handle is None:
                        return 0.0
                    c, _, double, op = handle
                    t0 = MPI.Wtime()
                    err = native.allreduce(sbuf, rbuf, reps, c, double, op)
                    elapsed = MPI.Wtime() - t0
                    if err:
                        raise RuntimeError(f"MPI error {err} in MPI_Allreduce")
                    return elapsed

                timed = measure(comm, run, samples=samples, min_time=min_time)
                yield CommPoint.measured(
                    timed,
                    benchmark="allreduce",
                    ranks=p,
                    nodes=len({infos[r].node for r in range(p)}),
                    pairs=1,
                    placement=placement,
                    message_bytes=count * 8,
                    params_key="",
                    params={"op": "sum", "dtype": "float64", "time": "slowest rank"},
                )
        finally:
            if sub != MPI.COMM_NULL:
                sub.Free()
