"""Who talks to whom in a 2D halo exchange, and the K-model's k.

Ranks are numbered as ``MPI_Cart_create`` numbers them (row-major: the last
dimension varies fastest), with ``dims = (px, py)``: X is Cartesian dimension
0, Y dimension 1, so Y neighbours are consecutive ranks.  Ranks map to nodes
in blocks of ``ranks_per_node`` (the default of mpiexec/srun), or by an
explicit list.

K-model (Choi et al., paper 002, eq. 4): ``k = (K_inter / K_total)·k'`` where
``k'`` is the number of communicating processes per node, ``K_inter`` the
largest number of inter-node messages sent by any node and ``K_total`` the
largest number of messages (intra- and inter-node) sent by any node.  A
neighbour that is the rank itself (a dimension of extent 1, periodic) is a
local copy, not a message (POP does not use MPI for local copies, paper 001
section 3.2).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

PHASES = ("x", "y")


@dataclass(frozen=True)
class Message:
    """One halo message of a phase (``x`` or ``y``) from ``src`` to ``dst``."""

    phase: str
    src: int
    dst: int


def cart_coords(rank: int, dims: tuple[int, int]) -> tuple[int, int]:
    return rank // dims[1], rank % dims[1]


def cart_rank(coords: tuple[int, int], dims: tuple[int, int]) -> int:
    return coords[0] * dims[1] + coords[1]


def neighbours(
    rank: int, dims: tuple[int, int], periodic: tuple[bool, bool] = (True, True)
) -> dict[str, list[int]]:
    """Per phase, the peers ``rank`` sends to (lower then upper; missing at a closed edge)."""
    coords = cart_coords(rank, dims)
    out: dict[str, list[int]] = {}
    for d, phase in enumerate(PHASES):
        peers = []
        for step in (-1, 1):
            c = list(coords)
            c[d] += step
            if not 0 <= c[d] < dims[d]:
                if not periodic[d]:
                    continue
                c[d] %= dims[d]
            peers.append(cart_rank((c[0], c[1]), dims))
        out[phase] = peers
    return out


def halo_messages(
    dims: tuple[int, int], periodic: tuple[bool, bool] = (True, True), *, shift: bool = False
) -> list[Message]:
    """Every MPI message of one exchange (self-neighbours are local copies, left out).

    ``shift``: a one-sided halo (a staggered field keeps one halo row, filled
    from one side), where each rank sends one message per phase, to its upper
    neighbour, instead of one to each side.
    """
    return [
        Message(phase, r, peer)
        for r in range(dims[0] * dims[1])
        for phase, peers in neighbours(r, dims, periodic).items()
        for peer in (peers[-1:] if shift else peers)
        if peer != r
    ]


def block_mapping(ranks: int, ranks_per_node: int) -> list[int]:
    """Node of each rank when ranks fill nodes in order (mpiexec/srun's block default)."""
    if ranks_per_node < 1:
        raise ValueError("ranks_per_node must be positive")
    return [r // ranks_per_node for r in range(ranks)]


@dataclass(frozen=True)
class KModel:
    k_prime: int
    k_inter: int
    k_total: int

    @property
    def k(self) -> float:
        """Paper 002 eq. 4 (fractional k allowed); 0 when nothing is sent."""
        return self.k_inter / self.k_total * self.k_prime if self.k_total else 0.0


def k_model(messages: Sequence[Message], node_of: Sequence[int]) -> KModel:
    """K-model counts for ``messages`` under the rank-to-node mapping ``node_of``."""
    total: dict[int, int] = {}
    inter: dict[int, int] = {}
    senders: dict[int, set[int]] = {}
    for m in messages:
        node = node_of[m.src]
        total[node] = total.get(node, 0) + 1
        senders.setdefault(node, set()).add(m.src)
        if node_of[m.dst] != node:
            inter[node] = inter.get(node, 0) + 1
    return KModel(
        k_prime=max((len(s) for s in senders.values()), default=0),
        k_inter=max(inter.values(), default=0),
        k_total=max(total.values(), default=0),
    )
