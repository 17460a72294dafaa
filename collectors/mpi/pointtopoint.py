"""Ping-pong per placement class and k concurrent pairs (max-rate).

Ping-pong (paper 001 section 3.2, paper 002 eq. 1): rank 0 and one partner
bounce a message; the stored time is one direction (half the round trip).
One partner is chosen per placement class present (the first rank that is
intra-socket, inter-socket, intra-node or inter-node to rank 0).

Pairs (paper 002 eq. 2-3): ranks ``i`` and ``i + P/2`` for ``i < k`` ping-pong
at once, k = 1 .. P/2; with ranks filling nodes in blocks, the pairs cross
from the first half of the ranks to the second.  A sample is the slowest pair.
The max-rate model's k is the number of processes of one node that
communicate at once: for inter-node pairs it is counted on the job's measured
rank-to-node mapping (:func:`.placement.node_mapping`), the most pair ends on
any one node, and stored as ``params["k_per_node"]`` beside the mapping.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
from mpi4py import MPI

from . import native
from .buffers import page_buffer
from .collective_timing import measure
from .placement import RankInfo, classify, node_count, node_mapping
from .results import CommPoint, Skip, point_key


def partners(infos: list[RankInfo]) -> dict[str, int]:
    """The first rank of each placement class relative to rank 0."""
    found: dict[str, int] = {}
    for info in infos[1:]:
        found.setdefault(classify(infos[0], info), info.rank)
    return found


def per_node_senders(pairs: list[tuple[int, int]], node_of: list[int]) -> int:
    """The most ranks of ``pairs`` on any one node: the max-rate k of inter-node pairs."""
    ends = [node_of[r] for pair in pairs for r in pair]
    return max(ends.count(n) for n in set(ends))


def _pairs_runner(
    comm: MPI.Comm, buf: np.ndarray, nbytes: int, pairs: list[tuple[int, int]]
) -> Callable[[int], float]:
    me = comm.rank
    c, byte, _, _ = native.handles(comm)
    role = next(((b, True) for a, b in pairs if a == me), None) or next(
        ((a, False) for a, b in pairs if b == me), None
    )

    def run(reps: int) -> float:
        if role is None:
            return 0.0
        peer, first = role
        t0 = MPI.Wtime()
        err = native.pingpong(buf, nbytes, peer, reps, first, c, byte)
        elapsed = MPI.Wtime() - t0
        if err:
            raise RuntimeError(f"MPI error {err} in ping-pong with rank {peer}")
        return elapsed if first else 0.0

    return run


def _per_partner(
    comm: MPI.Comm,
    infos: list[RankInfo],
    sizes: list[int],
    runner: Callable[[int, int], Callable[[int], float]],
    *,
    benchmark: str,
    divisor: float,
    what: str,
    samples: int,
    min_time: float,
    skip: Skip,
) -> Iterator[CommPoint]:
    """Rank 0 with one partner per placement class, every size: ``runner(n, partner)``."""
    for placement, partner in partners(infos).items():
        for n in sizes:
            if skip(point_key(benchmark, comm.size, 1, placement, n, f"ranks=0-{partner}")):
                continue
            timed = measure(
                comm, runner(n, partner), samples=samples, min_time=min_time, divisor=divisor
            )
            yield CommPoint.measured(
                timed,
                benchmark=benchmark,
                ranks=comm.size,
                nodes=node_count(infos),
                pairs=1,
                placement=placement,
                message_bytes=n,
                params_key=f"ranks=0-{partner}",
                params={"peer": [0, partner], "time": what, "driver": "numba+ctypes"},
            )


def pingpong(
    comm: MPI.Comm,
    infos: list[RankInfo],
    sizes: list[int],
    samples: int,
    min_time: float,
    skip: Skip,
) -> Iterator[CommPoint]:
    buf = page_buffer(max(sizes))
    yield from _per_partner(
        comm, infos, sizes, lambda n, partner: _pairs_runner(comm, buf, n, [(0, partner)]),
        benchmark="pingpong", divisor=2.0, what="one-way", samples=samples, min_time=min_time,
        skip=skip,
    )  # fmt: skip


def _exchange_runner(
    comm: MPI.Comm, sbuf: np.ndarray, rbuf: np.ndarray, nbytes: int, partner: int
) -> Callable[[int], float]:
    c, byte, _, _ = native.handles(comm)
    peer = {0: partner, partner: 0}.get(comm.rank)

    def run(reps: int) -> float:
        if peer is None:
            return 0.0
        t0 = MPI.Wtime()
        err = native.exchange(sbuf, rbuf, nbytes, peer, reps, c, byte)
        elapsed = MPI.Wtime() - t0
        if err:
            raise RuntimeError(f"MPI error {err} in MPI_Sendrecv with rank {peer}")
        return elapsed

    return run


def exchange(
    comm: MPI.Comm,
    infos: list[RankInfo],
    sizes: list[int],
    samples: int,
    min_time: float,
    skip: Skip,
) -> Iterator[CommPoint]:
    """Rank 0 and one partner per placement class send *and* receive ``n`` bytes at once.

    The unit of a halo exchange: every rank of a halo sends to its neighbours
    while receiving from them.  A sample is the slower rank's time per
    ``MPI_Sendrecv`` (no halving: both directions are in flight together).
    """
    sbuf, rbuf = page_buffer(max(sizes)), page_buffer(max(sizes))
    yield from _per_partner(
        comm, infos, sizes, lambda n, partner: _exchange_runner(comm, sbuf, rbuf, n, partner),
        benchmark="exchange", divisor=1.0, what="one MPI_Sendrecv, slower rank",
        samples=samples, min_time=min_time, skip=skip,
    )  # fmt: skip


def concurrent_pairs(
    comm: MPI.Comm,
    infos: list[RankInfo],
    sizes: list[int],
    samples: int,
    min_time: float,
    skip: Skip,
) -> Iterator[CommPoint]:
    half = comm.size // 2
    buf = page_buffer(max(sizes))
    node_of = node_mapping(infos)
    for k in range(1, half + 1):
        pairs = [(i, i + half) for i in range(k)]
        classes = {classify(infos[a], infos[b]) for a, b in pairs}
        placement = classes.pop() if len(classes) == 1 else "mixed"
        k_node = per_node_senders(pairs, node_of) if placement == "inter-node" else k
        for n in sizes:
            if skip(point_key("pairs", comm.size, k, placement, n, f"k={k}")):
                continue
            timed = measure(
                comm,
                _pairs_runner(comm, buf, n, pairs),
                samples=samples,
                min_time=min_time,
                divisor=2.0,
            )
            yield CommPoint.measured(
                timed,
                benchmark="pairs",
                ranks=comm.size,
                nodes=node_count(infos),
                pairs=k,
                placement=placement,
                message_bytes=n,
                params_key=f"k={k}",
                params={
                    "pairs": pairs,
                    "time": "one-way, slowest pair",
                    "node_of": node_of,
                    "k_per_node": k_node,
                },
            )
