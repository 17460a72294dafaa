"""Message buffers for the MPI benchmarks: page-aligned, on ordinary 4 KiB pages.

numpy asks the kernel for transparent huge pages for every array of 4 MiB or
more; osu_bw's (and most applications') buffers are ordinary pages.  Huge pages
change large-message bandwidth (MPICH's shared-memory copy walks fewer pages:
docs/findings/comm-benchmarks.md), so a buffer's page size must be fixed, not
left to its length: every buffer here is an anonymous mapping advised
``MADV_NOHUGEPAGE``,
as benchmarks/c_pingpong.c allocates its own.
"""

from __future__ import annotations

import mmap

import numpy as np


def page_buffer(nbytes: int, dtype: np.dtype | type = np.uint8) -> np.ndarray:
    """A zeroed array of ``nbytes`` bytes (at least one element) on 4 KiB pages."""
    dt = np.dtype(dtype)
    length = max(int(nbytes), dt.itemsize)
    region = mmap.mmap(-1, length, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    if hasattr(mmap, "MADV_NOHUGEPAGE"):
        region.madvise(mmap.MADV_NOHUGEPAGE)
    out = np.frombuffer(region, dtype=np.uint8)[: length - length % dt.itemsize].view(dt)
    out[...] = 0  # first touch now, not inside a timed loop
    return out
