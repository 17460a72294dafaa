"""Predicted time of one 2D halo exchange (POP's boundary exchange).

Kerbyson & Jones (paper 001, eq. 8 and 10): a boundary exchange is two
sequential phases, East-West (X) then North-South (Y); each costs
``T_comm(S, C) = L_c(S) + C·S·β(S)`` -- the contention factor ``C`` scales
the bandwidth term only.  Message sizes come from the *local* block: the X
phase sends the block's Y edge, ``S_x = ny·h·fields·bytes``; the Y phase
runs after X and so carries the corners, ``S_y = (nx + 2h)·h·fields·bytes``
(POP's ``N_y·(G+1)`` words play the same role).

Per phase and per rank, each message is intra- or inter-node under the
rank-to-node mapping.  Intra-node messages each pay the latency ``α``
(shared-memory MPI spends CPU time per message in both processes, so a
process's messages do not overlap); inter-node ones pay it once per phase,
as eq. 10 does.  Where the machine's ``MPI_Sendrecv`` was measured
(``comm.exchange``), an intra-node message costs one such round -- a halo's
ranks send and receive at once, which a one-way ping-pong does not see.
``C`` defaults to the number of that rank's messages in the class (they
leave one process one after the other) unless the machine gives a contention
table (paper 001 Table 1) or the caller passes one.
Inter-node messages use the max-rate model (paper 002 eq. 2-3) with ``k``
from the K-model (eq. 4) over that phase's messages, when the parameters
have max-rate values; otherwise the postal model.  A phase costs what its
slowest rank needs; a neighbour that is the rank itself is a local copy and
costs no communication.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from .kmodel import PHASES, block_mapping, halo_messages, k_model
from .params import CommParams


def halo_message_bytes(
    local: tuple[int, int], halo: int, fields: int, word_bytes: int, *, shift: bool = False
) -> dict[str, int]:
    """Bytes of one message in each phase.

    A halo on both sides (POP): X sends the block's Y edge, ``ny·h``; Y runs
    after X and so carries the corners, ``(nx + 2h)·h``.  A one-sided halo
    (``shift``, the shallow-water model's arrays of ``extent + h`` along each
    axis): each phase sends whole rows or columns of those arrays, halo
    included, ``(ny + h)·h`` and ``(nx + h)·h``.
    """
    nx, ny = local
    pad = halo if shift else 0
    return {
        "x": (ny + pad) * halo * fields * word_bytes,
        "y": (nx + (halo if shift else 2 * halo)) * halo * fields * word_bytes,
    }


@dataclass(frozen=True)
class PhasePrediction:
    phase: str
    message_bytes: int
    seconds: float
    messages_per_rank: int
    placement: str | None
    contention: float
    k: float | None
    model: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class HaloPrediction:
    seconds: float
    phases: tuple[PhasePrediction, ...]
    k_model: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {
            "seconds": self.seconds,
            "phases": [p.to_dict() for p in self.phases],
            "k_model": self.k_model,
        }


def _message_time(
    params: CommParams, inter: bool, nbytes: int, count: int, c: float | None, k: float
) -> tuple[float, str, float, str]:
    """(seconds, placement, contention used, model) for ``count`` messages of one rank."""
    placement = params.placement_for(inter)
    postal = params.postal[placement].regime(nbytes)
    exchange = None if inter else params.exchange.get(placement)
    contention = float(count) if c is None else c
    maxrate = params.maxrate_regime(placement, nbytes) if inter else None
    if maxrate is not None and k > 0:
        return (
            maxrate.alpha + contention * nbytes * maxrate.per_byte(k),
            placement,
            contention,
            f"max-rate ({maxrate.form}, {maxrate.name})",
        )
    # Within a node alpha is the processes' own CPU time per message (copying
    # through shared memory, matching, LogP's overhead o), which one process
    # cannot overlap for its successive messages: each message pays it.  Across
    # a network alpha is mostly wire latency, which overlaps: paid once (eq. 10).
    if exchange is not None:  # measured send-and-receive: each message is one such round
        r = exchange.regime(nbytes)
        return (count * r.alpha + contention * nbytes * r.beta, placement, contention,
                f"exchange ({r.name}), {count} x alpha")  # fmt: skip
    latency = postal.alpha * (1 if inter else count)
    return (
        latency + contention * nbytes * postal.beta,
        placement,
        contention,
        f"postal ({postal.name}){'' if inter else f', {count} x alpha'}",
    )


def predict_halo2d(
    params: CommParams,
    dims: tuple[int, int],
    local: tuple[int, int],
    *,
    halo: int = 1,
    fields: int = 1,
    word_bytes: int = 8,
    ranks_per_node: int | None = None,
    periodic: tuple[bool, bool] = (True, True),
    contention: tuple[float, float] | None = None,
    shift: bool = False,
    node_of: Sequence[int] | None = None,
) -> HaloPrediction:
    """One exchange on a ``dims = (px, py)`` Cartesian grid of ``local`` blocks.

    ``ranks_per_node`` defaults to the machine's, else all ranks on one node.
    ``contention`` (C_x, C_y) overrides the default; else the machine's
    contention table for this rank count is used when it has one.  ``shift``:
    a one-sided halo, one message per rank and phase (:func:`.kmodel.halo_messages`).
    ``node_of``, the node of every rank as a job measured it, replaces the
    block mapping of ``ranks_per_node`` ranks per node (the K-model, paper 002
    eq. 4, takes the actual rank-to-node mapping).
    """
    ranks = dims[0] * dims[1]
    if node_of is not None:
        node_of = list(node_of)
        rpn = max(node_of.count(n) for n in set(node_of))
    else:
        rpn = ranks_per_node or params.ranks_per_node or ranks
        node_of = block_mapping(ranks, rpn)
    sizes = halo_message_bytes(local, halo, fields, word_bytes, shift=shift)
    table = contention or params.contention.get(ranks)
    messages = halo_messages(dims, periodic, shift=shift)
    whole = k_model(messages, node_of)
    phases = []
    for i, phase in enumerate(PHASES):
        msgs = [m for m in messages if m.phase == phase]
        k = k_model(msgs, node_of).k
        nbytes = sizes[phase]
        worst = PhasePrediction(phase, nbytes, 0.0, 0, None, 0.0, None, "local copy")
        for rank in range(ranks):
            mine = [m for m in msgs if m.src == rank]
            for inter in (False, True):
                group = [m for m in mine if (node_of[m.dst] != node_of[rank]) == inter]
                if not group:
                    continue
                c = None if table is None else table[i]
                t, placement, used_c, model = _message_time(params, inter, nbytes, len(group), c, k)
                if t > worst.seconds:
                    worst = PhasePrediction(
                        phase, nbytes, t, len(mine), placement, used_c, k if inter else None, model
                    )
        phases.append(worst)
    return HaloPrediction(
        seconds=sum(p.seconds for p in phases),
        phases=tuple(phases),
        k_model={
            "k_prime": whole.k_prime,
            "k_inter": whole.k_inter,
            "k_total": whole.k_total,
            "k": whole.k,
            "ranks_per_node": rpn,
        },
    )
