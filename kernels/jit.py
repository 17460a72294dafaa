"""One place for the compiler options every kernel uses, serial and parallel.

* ``fastmath``: lets LLVM vectorise reductions and contract to FMA, as
  ``gcc -O3 -march=native -ffast-math``-class Fortran/C builds of these codes do.
* ``error_model="numpy"``: no Python zero-division checks inside the loops
  (the shallow ``z`` loop and the Thomas solver divide).
* ``boundscheck=False``: no bounds checks whatever ``NUMBA_BOUNDSCHECK`` says.
* no ``cache=True``: code loaded from numba's on-disk cache no longer inlines
  cross-library calls such as the clock read, which slows exactly the small
  sizes this tool measures (docs/findings/collection.md).  Each process
  compiles instead.

Each kernel is written once with ``prange``; :func:`variants` compiles it
twice.  A step that takes ``prange`` from :mod:`.loops` (the built-ins, so that
their modules import without numba) is compiled with numba's own ``prange`` in
its place.  ``prange`` in a function compiled without ``parallel=True`` is a plain
``range``, so threads=1 pays no parallel-region cost (~1.5 us a region).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import FunctionType

import numba

from . import loops

OPTIONS = {
    "fastmath": True,
    "error_model": "numpy",
    "boundscheck": False,
    "nogil": True,
}

serial = numba.njit(**OPTIONS)


@dataclass(frozen=True)
class Variants:
    """The serial and the ``parallel=True`` compilation of one Python function."""

    serial: Callable
    parallel: Callable

    def for_threads(self, threads: int) -> Callable:
        """The variant to time with ``threads`` threads (sets numba's thread count)."""
        set_threads(threads)
        return self.serial if threads == 1 else self.parallel


def jit(fn: Callable, parallel: bool) -> Callable:
    return numba.njit(parallel=parallel, **OPTIONS)(fn)


def _with_numba_prange(fn: Callable) -> Callable:
    """``fn`` itself, or, where its ``prange`` is :func:`.loops.prange`, the same code
    seeing ``numba.prange`` instead (its module's globals are left as they are)."""
    if not isinstance(fn, FunctionType) or fn.__globals__.get("prange") is not loops.prange:
        return fn
    seen = {**fn.__globals__, "prange": numba.prange}
    return FunctionType(fn.__code__, seen, fn.__name__, fn.__defaults__, fn.__closure__)


def variants(fn: Callable) -> Variants:
    fn = _with_numba_prange(fn)
    return Variants(jit(fn, parallel=False), jit(fn, parallel=True))


def set_threads(threads: int) -> None:
    """``numba.set_num_threads`` with an error naming the limit when it is too many."""
    limit = numba.config.NUMBA_NUM_THREADS
    if threads > limit:
        raise ValueError(f"threads={threads} exceeds numba's limit of {limit} (NUMBA_NUM_THREADS)")
    numba.set_num_threads(threads)
