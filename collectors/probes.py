"""Reading what the operating system saw while a sample ran: whether it measured the code.

A sample is the time a kernel took, and a kernel cannot tell whether its thread
held its core.  The kernel of the operating system can (docs/design.md,
"Measurement method"):

* the run-queue delay of every thread of this process (``/proc/self/task/*/schedstat``,
  second field): nanoseconds a thread was ready to run and waited for a CPU that
  another task held.  Read per thread, so with ``--threads N`` every numba worker
  counts, and a thread that sleeps at a barrier (voluntarily) does not;
* the process's CPU time (``CLOCK_PROCESS_CPUTIME_ID``) and involuntary context
  switches (``getrusage``), the explanation beside the delay;
* steal on the CPUs the process may run on (``/proc/stat``): time the hypervisor
  gave the virtual CPU to another guest, which no in-guest clock sees as waiting;
* for a user's program in a child process, the child's rusage once it is reaped
  (``RUSAGE_CHILDREN``): its user + system time and its context switches; and its
  main thread's run-queue delay, read after it exits and before it is reaped
  (:class:`~benchdb.kernels.api.ChildSchedstat`).  That delay is what the run lost
  where the main thread ran (nearly) all of the child's CPU time.  Where it did not
  (threads, or ranks and scripts the child started), or where no schedstat could be
  read, the time lost is the wall time the children's CPU time does not cover, less
  the least of that gap over the point's runs so far: the start-up (exec, loading)
  the same program needs when nothing disturbs it.  That gap jitters by a fraction
  of a millisecond on a quiet host, which is why the delay is preferred
  (docs/findings/disturbance.md).  A program running several threads has CPU time
  to spare against its wall time, so the gap test sees its disturbance only where
  the lost time exceeds what its extra threads add; its context switches and steal
  are still recorded.

* how long the CPUs the process may not use were busy (``/proc/stat``, in ticks of
  10 ms): a neighbour there takes no time from the sample's threads, yet shares the
  caches, the memory bus and, on a virtual machine whose CPUs are hyperthreads of
  one core, the core itself.  It is recorded, not judged (docs/findings/disturbance.md).

What a sample lost is the larger of its run-queue delay and steal
(:class:`benchdb.evidence.Evidence` judges it).  The cost of reading it is
measured in docs/findings/disturbance.md.
"""

from __future__ import annotations

import math
import os
import resource
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from benchdb.evidence import Evidence

from ..kernels.api import ChildSchedstat

TASKS = Path("/proc/self/task")
STAT = "/proc/stat"
_TICK_S = 1.0 / os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 0.01
_READ = 4096  # the per-CPU lines of /proc/stat come first
# A child's main thread ran at least this share of its CPU time: its run-queue delay is
# the run's (rusage and schedstat count the same clock; threads and grandchildren fail it)
MAIN_THREAD_SHARE = 0.9

T = TypeVar("T")


def _open(path: str | Path) -> int | None:
    try:
        return os.open(path, os.O_RDONLY)
    except OSError:
        return None


def _cpus() -> frozenset[int]:
    try:
        return frozenset(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return frozenset(range(os.cpu_count() or 1))


def _delta(after: float | None, before: float | None) -> float | None:
    return None if after is None or before is None else max(0.0, after - before)


class _Counters:
    """The kernel's files a probe reads, opened once per point and read with ``pread``
    (an open and a directory listing per sample would cost tens of microseconds)."""

    def __init__(self, threads: bool) -> None:
        self.cpus = _cpus()
        self.stat = _open(STAT)
        self.tasks: list[int] = []
        if threads:
            try:
                tids = os.listdir(TASKS)
            except OSError:
                tids = []
            opened = (_open(TASKS / t / "schedstat") for t in tids)
            self.tasks = [fd for fd in opened if fd is not None]

    def close(self) -> None:
        for fd in [*self.tasks, *([self.stat] if self.stat is not None else [])]:
            os.close(fd)
        self.tasks, self.stat = [], None

    def wait_s(self) -> float | None:
        """Run-queue delay of the process's threads, added; None without schedstat."""
        total, seen = 0, False
        for fd in self.tasks:
            try:
                total += int(os.pread(fd, 128, 0).split()[1])
                seen = True
            except (OSError, IndexError, ValueError):  # a thread that ended meanwhile
                continue
        return total * 1e-9 if seen else None

    def cpu_ticks(self) -> tuple[float | None, float | None]:
        """(steal on the process's CPUs, busy time of the other CPUs), accumulated, in
        seconds; None where /proc/stat has no steal column, or there is no other CPU."""
        if self.stat is None:
            return None, None
        steal = busy = 0
        seen_steal = seen_other = False
        for line in os.pread(self.stat, _READ, 0).decode().splitlines():
            name, _, rest = line.partition(" ")
            if not name.startswith("cpu"):
                break
            if name == "cpu":
                continue
            fields = [int(f) for f in rest.split()]
            if int(name[3:]) in self.cpus:
                if len(fields) > 7:
                    steal += fields[7]
                    seen_steal = True
            else:  # user, nice, system, irq, softirq, steal: the CPU ran someone
                busy += sum(fields[i] for i in (0, 1, 2, 5, 6, 7) if i < len(fields))
                seen_other = True
        return (steal * _TICK_S if seen_steal else None), (busy * _TICK_S if seen_other else None)


class Probe:
    """Reads the evidence around samples of code running in this process.

    Open it once per point, after the point's threads exist (numba's pool starts
    with the collector), then ``times, evidence = probe.measure(run)`` per
    sample.  A sample's reads cost tens of microseconds, against samples of
    milliseconds (measured in docs/findings/disturbance.md).
    """

    _threads = True

    def __enter__(self) -> Probe:
        self._counters = _Counters(self._threads)
        return self

    def __exit__(self, *exc: object) -> None:
        self._counters.close()

    def measure(self, run: Callable[[], T]) -> tuple[T, Evidence]:
        c = self._counters
        (steal0, others0), nivcsw0, wait0 = c.cpu_ticks(), self._nivcsw(), c.wait_s()
        cpu0, wall0 = self._cpu(), time.perf_counter()
        result = run()
        wall, cpu = time.perf_counter() - wall0, self._cpu() - cpu0
        wait, nivcsw = self._wait(_delta(c.wait_s(), wait0), cpu), self._nivcsw() - nivcsw0
        steal1, others1 = c.cpu_ticks()
        steal, others = _delta(steal1, steal0), _delta(others1, others0)
        lost = self._lost(wall, cpu, wait, steal)
        return result, Evidence(wall, cpu, wait, nivcsw, steal, lost, others)

    def _cpu(self) -> float:
        return time.process_time()

    def _wait(self, threads_wait: float | None, cpu: float) -> float | None:
        return threads_wait

    def _nivcsw(self) -> int:
        return resource.getrusage(resource.RUSAGE_SELF).ru_nivcsw

    def _lost(self, wall: float, cpu: float, wait: float | None, steal: float | None) -> float:
        # Without schedstat: the wall time the process's CPU time leaves uncovered.
        lost = max(0.0, wall - cpu) if wait is None else wait
        return max(lost, steal or 0.0)


class ChildProbe(Probe):
    """Reads the evidence around runs of a program in a child process.

    The child must be waited for inside ``run`` (``subprocess`` does), so that its
    rusage is added to ``RUSAGE_CHILDREN``; only one child may run at a time.
    ``schedstat`` gives the scheduler's account of the last run's child.  The first
    run is the baseline of the start-up gap (a point's first runs calibrate).
    """

    _threads = False
    _start_s = math.inf  # the least wall - CPU gap of this point's runs so far

    def __init__(self, schedstat: Callable[[], ChildSchedstat | None]) -> None:
        self._schedstat = schedstat

    def _cpu(self) -> float:
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime

    def _nivcsw(self) -> int:
        return resource.getrusage(resource.RUSAGE_CHILDREN).ru_nivcsw

    def _wait(self, threads_wait: float | None, cpu: float) -> float | None:
        """The child's run-queue delay, where its main thread ran at least
        :data:`MAIN_THREAD_SHARE` of the CPU time its run took; else None."""
        seen = self._schedstat()
        if seen is None or seen.on_cpu_s < MAIN_THREAD_SHARE * cpu:
            return None
        return seen.run_delay_s

    def _lost(self, wall: float, cpu: float, wait: float | None, steal: float | None) -> float:
        self._start_s = min(self._start_s, wall - cpu)
        # without the child's delay, what its start-up gap leaves uncovered is lost
        return super()._lost(wall - self._start_s, cpu, wait, steal)
