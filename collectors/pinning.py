"""Threads as a measured dimension (paper 004, the DMI HBM thread-scaling report):
numba's thread count, the threading layer actually loaded, and CPU pinning.

Pinning uses ``os.sched_setaffinity`` on every thread of the process (the
main thread and numba's workers, listed in ``/proc/self/task``), so a point
at t threads runs on t of the CPUs the process may use, and threads started
later inherit the mask.  The placement string stored with each point says
which CPUs (``cpus:0-1``), or ``none`` where the OS does not allow pinning.

Which t: the first ones no other benchdb process on this OS has claimed.  Two
collections started side by side, or the emulated nodes of a Slurm cluster on one
host (whose slurmds each see every CPU of it), would otherwise each pin to the
first CPU, share it, and store every point at half speed, disturbed.  A claim is an
exclusive ``flock`` on one file per CPU in a folder every process of the OS sees;
the kernel drops it when the holder ends, however it ends.  Where every CPU is
claimed, the first ones are shared as before, and the samples' evidence says so.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path

TASKS = Path("/proc/self/task")
SHARED = Path("/dev/shm")  # one per OS, unlike a job's own TMPDIR
CLAIMS = (SHARED if SHARED.is_dir() else Path(tempfile.gettempdir())) / "benchdb-cpus"


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


def _claim(cpu: int, stack: ExitStack) -> bool:
    """Claim ``cpu`` for as long as ``stack`` is open; False where another process holds
    it.  Where no claim can be made here (no folder to write, no ``fcntl``), every CPU
    counts as free: pinning then picks as it did before claims."""
    try:
        import fcntl

        CLAIMS.mkdir(exist_ok=True)
        with suppress(OSError):  # a folder another user made stays theirs
            CLAIMS.chmod(0o1777)
        fd = os.open(CLAIMS / f"cpu{cpu}", os.O_RDONLY | os.O_CREAT, 0o644)
    except (ImportError, OSError):
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # held by another process (or by another pinning of this one)
        os.close(fd)
        return False
    stack.callback(os.close, fd)  # closing the descriptor ends the claim
    return True


def claim_cpus(usable: list[int], count: int, first: int, stack: ExitStack) -> list[int]:
    """``count`` of ``usable`` CPUs, ascending, claimed for as long as ``stack`` is open:
    the first unclaimed ones from position ``first`` on (wrapping round), and where too
    few are free, the first ones from there whoever holds them."""
    order = usable[first:] + usable[:first]
    chosen: list[int] = []
    for cpu in order:
        if len(chosen) == count:
            break
        if _claim(cpu, stack):
            chosen.append(cpu)
    chosen += [cpu for cpu in order if cpu not in chosen][: count - len(chosen)]
    return sorted(chosen)


@contextmanager
def pinned(threads: int, first: int = 0) -> Iterator[str]:
    """Set numba's thread count, pin the process to ``threads`` CPUs no other benchdb
    process holds; yields the placement.

    ``first``: how many of the usable CPUs to skip before looking, so that two processes
    measuring at once (``benchdb ab --order duet``) each get CPUs of their own.  The
    original affinity is restored afterwards, and the claims released.
    """
    import numba

    numba.set_num_threads(threads)
    if not (hasattr(os, "sched_setaffinity") and TASKS.is_dir()):
        yield "none"
        return
    original = os.sched_getaffinity(0)
    with ExitStack() as claims:
        cpus = claim_cpus(sorted(original), threads, first, claims)
        with _affinity(cpus, original) as placement:
            yield placement


@contextmanager
def _affinity(cpus: list[int], original: set[int]) -> Iterator[str]:
    """Every thread of the process on ``cpus``, back on ``original`` afterwards."""
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
