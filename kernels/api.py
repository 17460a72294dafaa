"""The contract between ``benchdb.kernels`` and the collectors.

A *kernel* is one timed loop with its metadata (what the database's ``kernel``
table stores).  A *benchmark* is what the collectors run: it prepares the data
for one problem shape, precision and thread count and times one or more kernels
per call.  Micro-kernels (a stencil sweep, STREAM triad) time exactly one
kernel; the shallow-water benchmark times its ten update loops (plus the copies
and boundary updates) *in the context of the full time step*, as paper 003
(Osprey et al., HPCS 2014, section V) put timers around each loop inside the
time-stepping loop.

Repetition loops live in compiled code, and the returned times are measured by
the compiled driver itself, so a sample never pays for a Python round trip per
repetition.  This module imports nothing heavy: no numba, no numpy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from .basics import DTYPE_BYTES as DTYPE_BYTES  # re-exported: the contract's words
from .basics import KernelError as KernelError
from .basics import Shape as Shape
from .geometry import Geometry
from .layout import Layout


class PointFailure(Exception):
    """A benchmark could not be measured at one point (a program crashed, timed out,
    printed output that breaks the protocol or failed its own check there).

    The collectors store the point as invalid with this reason and go on with
    the sweep; ``predict`` never uses it.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class KernelInfo:
    """Static description of one timed loop (paper 003, Table I).

    ``loads_per_point`` and ``stores_per_point`` count array elements per
    updated point *with reuse* (what the paper calls loads and stores);
    multiply by the element size for bytes.  ``arrays`` is the number of arrays
    in the *footprint* (for shallow: all 13 arrays of the model, not just the
    ones this loop touches, paper eq. 9).
    """

    name: str
    family: str
    ndim: int
    flops_per_point: float
    loads_per_point: float
    stores_per_point: float
    arrays: int
    description: str
    footprint_version: int = 1  # of how a shape maps to points and bytes (builtin/shallow)
    write_allocate: bool = True
    extra: Mapping[str, object] = field(default_factory=dict)
    origin: str = "builtin"  # builtin, plugin or program
    source_hash: str | None = None  # sha256 of the user's code: spec and binary, plugin source
    layout: Layout | None = None  # how a user kernel's shape maps to points and bytes

    def bytes_per_point(self, precision: str, *, with_write_allocate: bool = False) -> float:
        """Bytes moved per point; STREAM counting unless ``with_write_allocate``."""
        words = self.loads_per_point + self.stores_per_point
        if with_write_allocate and self.write_allocate:
            words += self.stores_per_point
        return words * DTYPE_BYTES[precision]


class Prepared(Protocol):
    """Data allocated and initialised for one (shape, precision, threads)."""

    footprint_bytes: int

    def run(self, repetitions: int) -> dict[str, float]:
        """Run ``repetitions`` repetitions; seconds spent in each kernel, summed."""

    def checksum(self) -> float | None:
        """A digest of the result after the untimed first repetition, or None.

        Taken before any timed repetition, so it depends on the shape, precision
        and code but not on how many repetitions a pass calibrated: the
        collectors check that every pass over a point gives the same.
        """


@dataclass(frozen=True)
class Verification:
    """What a benchmark's collect-time check found (docs/design.md, "Collect-time verification")."""

    benchmark: str
    shape: Shape
    precision: str
    threads: int
    detail: str  # e.g. "max error 2.1e-16 of the reference's scale (tolerance 1e-09)"


@dataclass(frozen=True)
class ChildSchedstat:
    """What the scheduler saw of a child process's main thread over its life, read once
    it has exited and before it is reaped (``/proc/PID/schedstat``): the time it ran on
    a CPU, and the time it was ready to run and waited for one that another task held."""

    on_cpu_s: float
    run_delay_s: float


@runtime_checkable
class SelfTimed(Protocol):
    """A :class:`Prepared` whose repetitions run in another process.

    The wall clock around ``run()`` would count that process's start, set-up
    and warm-up, so calibration uses the times the process reports instead.
    """

    def reported_seconds(self, times: Mapping[str, float]) -> float:
        """The length of one sample, from the times ``run()`` returned."""

    def last_schedstat(self) -> ChildSchedstat | None:
        """The scheduler's account of the process of the last ``run()``; None where the
        operating system keeps none (no procfs, no ``pidfd_open``)."""


class SizedBenchmark(Protocol):
    """What preparing and checking a compiled benchmark asks of it: its name, the points
    and bytes of a shape, and the small shape its reference check runs at."""

    name: str
    check_shape: Shape

    def points(self, shape: Shape) -> int:
        """Points each repetition updates at ``shape``."""

    def footprint_bytes(self, shape: Shape, precision: str) -> int:
        """Footprint in bytes of all arrays, computed without allocating."""


class Benchmark(Protocol):
    """A runnable unit for the collectors: one family or one micro-kernel."""

    name: str
    kernels: Sequence[KernelInfo]
    ndim: int
    geometry: Geometry
    precisions: Sequence[str]  # those it can run
    max_threads: int | None  # None: any thread count

    def footprint_bytes(self, shape: Shape, precision: str) -> int:
        """Footprint in bytes of all arrays, computed without allocating."""

    def kernel_points(self, shape: Shape) -> Mapping[str, int]:
        """Points each kernel updates per repetition at ``shape``, by kernel name."""

    def prepare(self, shape: Shape, precision: str, threads: int) -> Prepared:
        """Allocate and initialise; compile (first call) but time nothing."""

    def verify(self, precision: str, threads: int) -> Verification | None:
        """Check the compiled code on a small shape before a sweep; None if nothing to check.

        Raises :class:`KernelError` when the result is wrong (a kernel that
        disagrees with its reference, a program that fails its own check).
        """
