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
from typing import Protocol

Shape = tuple[int, ...]

DTYPE_BYTES: Mapping[str, int] = {"float64": 8, "float32": 4}


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
    footprint_version: int = 1
    write_allocate: bool = True
    extra: Mapping[str, object] = field(default_factory=dict)

    def bytes_per_point(self, precision: str, *, with_write_allocate: bool = False) -> float:
        """Bytes moved per point; STREAM counting unless ``with_write_allocate``."""
        words = self.loads_per_point + self.stores_per_point
        if with_write_allocate and self.write_allocate:
            words += self.stores_per_point
        return words * DTYPE_BYTES[precision]


class Prepared(Protocol):
    """Data allocated and initialised for one (shape, precision, threads)."""

    footprint_bytes: int
    points: int  # points each timed kernel updates per repetition

    def run(self, repetitions: int) -> dict[str, float]:
        """Run ``repetitions`` repetitions; seconds spent in each kernel, summed."""

    def checksum(self) -> float:
        """A scalar digest of the output (sum of the result array(s))."""


class Benchmark(Protocol):
    """A runnable unit for the collectors: one family or one micro-kernel."""

    name: str
    kernels: Sequence[KernelInfo]
    ndim: int

    def footprint_bytes(self, shape: Shape, precision: str) -> int:
        """Footprint in bytes of all arrays, computed without allocating."""

    def prepare(self, shape: Shape, precision: str, threads: int) -> Prepared:
        """Allocate and initialise; compile (first call) but time nothing."""
