"""Where a trial's arrays land in memory, drawn afresh per trial and alike on both sides.

Identical code in two worker processes can run far apart at one point, the same in
every pair of a trial (docs/findings/ab-comparison.md).  Two things about an
array's address move the time of an L1-sized loop:

* its offset within the 4 KiB page: a store and a later load whose addresses agree
  in their low 12 bits wait on each other (4K aliasing), and the L1 sets in use
  follow the offset;
* its virtual page: with the same offsets, some draws of pages run the same loop
  about twice as slow as others, every time they are timed.  AMD's L1 data cache
  picks its way by a hash of the virtual address above the page offset (the
  "µtag" of Lipp et al., "Take A Way: Exploring the Security Implications of AMD's
  Cache Way Predictors", AsiaCCS 2020), and two lines whose hashes collide evict
  each other.  The physical pages under the same virtual ones move it too, and
  those no process chooses (docs/findings/ab-comparison.md).

The processes' heaps drift apart (one side retakes a sample, the other does not;
their paths differ), so arrays allocated the ordinary way land on different pages,
and often at different offsets, on the two sides.  So each trial of ``benchdb ab``
moves every array of the prepared state to an address drawn from the trial's
seed, the same seed on both sides: a mapping of its own at a page drawn within
:data:`WINDOW_PAGES` pages from :data:`WINDOW_START` (far from where Linux puts a
process's heap, libraries and stack), at an offset within the page that is a
drawn multiple of a cache line.  Within a trial both sides run with the same
virtual addresses, so the layout's effect falls on both halves of every pair; from
trial to trial the addresses change, so the trials sample the layout (Curtsinger
& Berger, "STABILIZER: Statistically Sound Performance Evaluation", ASPLOS 2013,
randomize the layout for the same reason).  Where the address cannot be had (not
Linux, a kernel without ``MAP_FIXED_NOREPLACE``, the range taken) the array moves
to the drawn offset on an ordinary buffer, as before.

Only the state of compiled step kernels (the built-in micro-kernels and users'
plugins: a ``state`` tuple of arrays) can be moved; a shallow model's fields and a
program's arrays stay where they were allocated.
"""

from __future__ import annotations

import ctypes
import mmap
import sys
import weakref
from typing import Any

import numpy as np

PAGE = 4096
LINE = 64
WINDOW_START = 1 << 44
"""16 TiB: below where Linux places a position-independent executable and its heap
(about 85 TiB and up on x86-64) and its mappings (near the top of the 128 TiB user
space), far above a fixed-address executable."""
WINDOW_PAGES = 1 << 30
"""Pages the drawn addresses spread over (4 TiB of address space, nothing allocated)."""

_MAP_FIXED_NOREPLACE = 0x100000  # <linux/mman.h>, Linux 4.17+: fail rather than replace


def _libc_mapper() -> tuple[Any, Any] | None:
    """libc's ``mmap`` and ``munmap``, typed; None off Linux."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        mmap_, munmap = libc.mmap, libc.munmap
    except (OSError, AttributeError):
        return None
    mmap_.restype = ctypes.c_void_p
    mmap_.argtypes = [
        ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long
    ]  # fmt: skip
    munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    return mmap_, munmap


_MAPPER = _libc_mapper()


def _mapped_at(address: int, length: int) -> np.ndarray | None:
    """``length`` zeroed bytes mapped at ``address`` (unmapped when the last array on
    them goes), or None where that address cannot be had."""
    if _MAPPER is None:
        return None
    mmap_, munmap = _MAPPER
    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _MAP_FIXED_NOREPLACE
    got = mmap_(address, length, mmap.PROT_READ | mmap.PROT_WRITE, flags, -1, 0)
    if got is None or got == ctypes.c_void_p(-1).value:
        return None
    if got != address:  # an older kernel took the address as a hint only
        munmap(got, length)
        return None
    memory = (ctypes.c_uint8 * length).from_address(got)
    weakref.finalize(memory, munmap, got, length)
    return np.frombuffer(memory, dtype=np.uint8)


def _moved(a: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A copy of ``a`` at a drawn page of the window, its first element at a drawn
    multiple of :data:`LINE` within the page; at that offset on an ordinary buffer where
    the page cannot be had."""
    target = int(rng.integers(0, PAGE // LINE)) * LINE
    page = int(rng.integers(0, WINDOW_PAGES))
    length = max(PAGE, -(-(target + a.nbytes) // PAGE) * PAGE)
    buffer = _mapped_at(WINDOW_START + page * PAGE, length)
    if buffer is None:
        buffer = np.empty(a.nbytes + 2 * PAGE, dtype=np.uint8)
        offset = (target - buffer.ctypes.data) % PAGE
    else:
        offset = target
    order = "F" if a.flags.f_contiguous and not a.flags.c_contiguous else "C"
    moved = np.ndarray(a.shape, dtype=a.dtype, buffer=buffer, offset=offset, order=order)
    moved[...] = a
    return moved


def relocate(prepared: Any, seed: int) -> bool:
    """Move the arrays of ``prepared.state`` (module docstring); whether it has one."""
    state = getattr(prepared, "state", None)
    if type(state) is not tuple:  # a model's named fields (shallow) are not a step's state
        return False
    rng = np.random.default_rng(seed)
    prepared.state = tuple(
        _moved(x, rng)
        if isinstance(x, np.ndarray) and x.ndim and (x.flags.c_contiguous or x.flags.f_contiguous)
        else x
        for x in state
    )
    return True
