"""Where two ranks sit relative to each other: same socket, other socket, other node.

Choi et al. (paper 002, section 3.2) model intra-socket, inter-socket and
inter-node messages separately.  Each rank reports its node and CPU affinity;
the node is the batch scheduler's node name inside one of its jobs
(:func:`benchdb.scheduler.scheduled_node_name`), else MPI's processor name, so
the rank-to-node mapping is the one the job really had (and two emulated nodes
on one host are two nodes).  The socket of
every CPU comes from sysfs (``topology/physical_package_id``).  Ranks on
different nodes are ``inter-node``; on one node, ranks pinned within one
socket each are ``intra-socket`` or ``inter-socket``; unpinned ranks that may
run on more than one socket are ``intra-node`` (the socket is unknown).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from mpi4py import MPI

from benchdb.scheduler import scheduled_node_name

SYS_CPU = Path("/sys/devices/system/cpu")


@dataclass(frozen=True)
class RankInfo:
    rank: int
    node: str  # the scheduler's node name, else MPI processor name
    cpus: tuple[int, ...]
    sockets: tuple[int, ...]


def package_of(cpu: int) -> int | None:
    try:
        return int((SYS_CPU / f"cpu{cpu}" / "topology" / "physical_package_id").read_text())
    except (OSError, ValueError):
        return None


def local_info(rank: int) -> RankInfo:
    cpus = tuple(sorted(os.sched_getaffinity(0)))
    packages = {package_of(c) for c in cpus}
    sockets = tuple(sorted(p for p in packages if p is not None)) if None not in packages else ()
    node = scheduled_node_name() or MPI.Get_processor_name()
    return RankInfo(rank=rank, node=node, cpus=cpus, sockets=sockets)


def classify(a: RankInfo, b: RankInfo) -> str:
    if a.node != b.node:
        return "inter-node"
    if len(a.sockets) == 1 and len(b.sockets) == 1:
        return "intra-socket" if a.sockets == b.sockets else "inter-socket"
    return "intra-node"


def node_count(infos: list[RankInfo]) -> int:
    return len({i.node for i in infos})


def group_placement(infos: list[RankInfo], ranks: range | list[int]) -> str:
    """Placement of a group of ranks: ``inter-node`` if it spans nodes, else ``intra-node``."""
    nodes = {infos[r].node for r in ranks}
    return "inter-node" if len(nodes) > 1 else "intra-node"


def node_mapping(infos: list[RankInfo]) -> list[int]:
    """Node index of every rank, numbered in order of first appearance: the measured
    rank-to-node mapping the K-model (paper 002 eq. 4) takes."""
    index: dict[str, int] = {}
    return [index.setdefault(i.node, len(index)) for i in infos]
