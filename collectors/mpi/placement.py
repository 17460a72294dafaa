"""Where two ranks sit relative to each other: same socket, other socket, other node.

Choi et al. (paper 002, section 3.2) model intra-socket, inter-socket and
inter-node messages separately.  Each rank reports its hostname and CPU
affinity; the socket of every CPU comes from sysfs
(``topology/physical_package_id``).  Ranks on different hosts are
``inter-node``; on one host, ranks pinned within one socket each are
``intra-socket`` or ``inter-socket``; unpinned ranks that may run on more than
one socket are ``intra-node`` (the socket is unknown).
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path

SYS_CPU = Path("/sys/devices/system/cpu")


@dataclass(frozen=True)
class RankInfo:
    rank: int
    hostname: str
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
    return RankInfo(rank=rank, hostname=socket.gethostname(), cpus=cpus, sockets=sockets)


def classify(a: RankInfo, b: RankInfo) -> str:
    if a.hostname != b.hostname:
        return "inter-node"
    if len(a.sockets) == 1 and len(b.sockets) == 1:
        return "intra-socket" if a.sockets == b.sockets else "inter-socket"
    return "intra-node"


def node_count(infos: list[RankInfo]) -> int:
    return len({i.hostname for i in infos})


def group_placement(infos: list[RankInfo], ranks: range | list[int]) -> str:
    """Placement of a group of ranks: ``inter-node`` if it spans hosts, else ``intra-node``."""
    hosts = {infos[r].hostname for r in ranks}
    return "inter-node" if len(hosts) > 1 else "intra-node"
