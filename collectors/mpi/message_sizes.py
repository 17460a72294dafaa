"""Message sizes: powers of two, plus sizes around the MPI library's protocol switches.

The postal model is piecewise by protocol regime (paper 002 section 2.1); its
breakpoints are found from the data, so the sweep must sample both sides of
every switch densely.  MPICH (ch4) changes protocol intra-node where a message
no longer fits one shared-memory queue cell and where it turns to the
single-copy CMA path, and inter-node at the netmod's eager limit.  Their
values are the library's CVARs (``mpivars`` lists them); a user's setting of
the same environment variable wins.
"""

from __future__ import annotations

import os

MPICH_THRESHOLDS = {
    # MPICH 4.x/5.x defaults, as printed by the wheel's `mpivars`
    "MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE": 8192,
    "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD": 8192,
    "MPIR_CVAR_CH4_IPC_XPMEM_P2P_THRESHOLD": 65536,
    "MPIR_CVAR_CH4_OFI_EAGER_THRESHOLD": 16384,  # -1 = provider default; 16 KiB typical
}


def protocol_thresholds(environ: dict[str, str] | None = None) -> dict[str, int]:
    """The thresholds in effect: the environment's value where set and positive."""
    env = os.environ if environ is None else environ
    out = {}
    for name, default in MPICH_THRESHOLDS.items():
        try:
            value = int(env.get(name, default))
        except ValueError:
            value = default
        out[name] = value if value > 0 else default
    return out


def message_sizes(max_bytes: int, min_bytes: int = 1, extra_near: bool = True) -> list[int]:
    """Powers of two in [min_bytes, max_bytes], plus 3t/4, t±8 and 3t/2 per threshold t."""
    sizes = set()
    s = 1
    while s <= max_bytes:
        if s >= min_bytes:
            sizes.add(s)
        s *= 2
    if extra_near:
        for t in set(protocol_thresholds().values()):
            sizes.update(x for x in (3 * t // 4, t - 8, t + 8, 3 * t // 2) if x >= min_bytes)
    return sorted(x for x in sizes if x <= max_bytes)
