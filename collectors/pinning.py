"""Threads as a measured dimension (paper 004, the DMI HBM thread-scaling report):
numba's thread count, the threading layer actually loaded, and CPU pinning.

Pinning uses ``os.sched_setaffinity`` on every thread of the process (the
main thread and numba's workers, listed in ``/proc/self/task``), so a point
at t threads runs on the first t CPUs the process may use, and threads started
later inherit the mask.  The placement string stored with each point says
which CPUs (``cpus:0-1``), or ``none`` where the OS does not allow pinning.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

TASKS = Path("/proc/self/task")


def start_numba_threads() -> str:
    """Launch numba's thread pool; the name of the threading layer it loaded (e.g. ``omp``).

    The layer is only known once the pool exists; the environment row records
    it (docs/design.md "Measurement method").
    """
    import numba

    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    return str(numba.threading_layer())


def _set_all_threads(cpus: set[int]) -> None:
    for tid in os.listdir(TASKS):
        try:
            os.sched_setaffinity(int(tid), cpus)
        except ProcessLookupError:  # the thread ended meanwhile
            continue


def _label(cpus: list[int]) -> str:
    if cpus == list(range(cpus[0], cpus[-1] + 1)) and len(cpus) > 1:
        return f"cpus:{cpus[0]}-{cpus[-1]}"
    return "cpus:" + ",".join(map(str, cpus))


def usable_cpus() -> list[int]:
    """The CPUs this process may run on, ascending."""
    if hasattr(os, "sched_getaffinity"):
        return sorted(os.sched_getaffinity(0))
    return list(range(os.cpu_count() or 1))


@contextmanager
def pinned(threads: int, first: int = 0) -> Iterator[str]:
    """Set numba's thread count, pin the process to ``threads`` CPUs; yields the placement.

    ``first``: how many of the usable CPUs to skip, so that two processes measuring at
    once (``benchdb ab --order duet``) each get CPUs of their own.  The original
    affinity is restored afterwards.
    """
    import numba

    numba.set_num_threads(threads)
    if not (hasattr(os, "sched_setaffinity") and TASKS.is_dir()):
        yield "none"
        return
    original = os.sched_getaffinity(0)
    cpus = sorted(original)[first : first + threads]
    try:
        _set_all_threads(set(cpus))
        placement = _label(cpus)
    except OSError:  # not permitted here (some containers): measure unpinned
        placement = "none"
    try:
        yield placement
    finally:
        with suppress(OSError):
            _set_all_threads(original)
