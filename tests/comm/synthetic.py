"""Communication points with known answers: ping-pong times from Lassen's table."""

from __future__ import annotations

from benchdb.collectors.mpi.results import CommPoint

from benchdb.comm import load_machine_file


def lassen_pingpong() -> list[CommPoint]:
    """Ping-pong points whose times follow Lassen's intra-socket table, 1 % apart."""
    truth = load_machine_file("lassen").postal["intra-socket"]
    sizes = sorted({2**i for i in range(0, 21)} | {6144, 98304})
    return [
        CommPoint("pingpong", 2, 1, 1, "intra-socket", n, "ranks=0-1", {}, 10,
                  [truth.time(n) * f for f in (0.99, 1.0, 1.01, 1.0, 1.0)])
        for n in sizes
    ]  # fmt: skip
