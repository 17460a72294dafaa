"""Timing driver of the micro-kernels: the built-ins declared in :mod:`.builtin`
(stencils, Jacobi, tridiagonal, STREAM) and users' plugins (:mod:`.plugin`).

A micro-kernel is timed in isolation (docs/design.md, "Measurement method"): one
compiled driver runs all repetitions and reads the time-stamp counter before
and after, so a sample pays neither a Python round trip per repetition nor a
numba call (~0.2 us) per repetition.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .api import Shape, SizedBenchmark, Verification
from .clock import seconds, tick
from .jit import Variants, serial, variants
from .verify import as_arrays, compare

CHECK_REPETITIONS = 4  # repetitions compared with the reference, the first one included


@serial
def timed_repeat(step, state, first, repetitions):
    """Run ``step(*state, r)`` for r in [first, first + repetitions); elapsed ticks.

    The steps take their arrays as separate arguments: arrays unpacked from
    a tuple argument inside a ``parallel=True`` function lost their writes
    with numba 0.68 (the parallel triad left ``a`` untouched).
    """
    t0 = tick()
    for r in range(first, first + repetitions):
        step(*state, r)
    return tick() - t0


@serial
def iterate_until(step, state, residual, tolerance, max_repetitions):
    """Repeat ``step`` until ``residual[0] <= tolerance``; the repetitions it took."""
    for r in range(max_repetitions):
        step(*state, r)
        if residual[0] <= tolerance:
            return r + 1
    return max_repetitions


@dataclass(frozen=True)
class MicroKernel:
    """A micro-kernel: initial state, compiled step, numpy reference step, output.

    ``output(state, repetitions_done)`` gives the array, or arrays, that the
    repetitions wrote: what the reference check compares and the checksum sums.
    A kernel without a reference (a user's plugin may have none) is not checked.
    """

    setup: Callable[[Shape, str], tuple]
    step: Variants
    reference: Callable[[tuple, int], None] | None
    output: Callable[[tuple, int], np.ndarray | tuple[np.ndarray, ...]]
    tolerance: float | None = None  # relative; None: verify.TOLERANCE of the precision

    @classmethod
    def declared(
        cls,
        setup: Callable[[Shape, str], tuple],
        step: Callable[..., Any],
        reference: Callable[[tuple, int], None] | None,
        output: Callable[[tuple, int], Any],
        tolerance: float | None = None,
    ) -> MicroKernel:
        """A declared kernel (a built-in's or a plugin's) with its step compiled both
        ways; a step given already jitted is compiled from the function it wraps."""
        compiled = variants(getattr(step, "py_func", step))
        return cls(setup, compiled, reference, output, tolerance)


@dataclass
class MicroPrepared:
    """A micro-kernel's data for one shape, precision and thread count (``api.Prepared``).

    ``repetitions_done`` counts every repetition applied to ``state`` since
    setup, the warm-up included, so a test can replay them with the reference.
    """

    name: str
    kernel: MicroKernel
    state: tuple
    threads: int
    points: int
    footprint_bytes: int
    repetitions_done: int = field(default=0)

    def run(self, repetitions: int) -> dict[str, float]:
        step = self.kernel.step.for_threads(self.threads)
        ticks = timed_repeat(step, self.state, self.repetitions_done, repetitions)
        self.repetitions_done += repetitions
        return {self.name: seconds(ticks)}

    def output(self) -> np.ndarray | tuple[np.ndarray, ...]:
        return self.kernel.output(self.state, self.repetitions_done)

    def checksum(self) -> float:
        """Sum of the output array(s) in float64."""
        return float(sum(np.sum(a, dtype=np.float64) for a in as_arrays(self.output())))


def prepare_micro(
    bench: SizedBenchmark, kernel: MicroKernel, shape: Shape, precision: str, threads: int
) -> MicroPrepared:
    """Set up ``kernel`` and run one untimed repetition: JIT compile plus first touch.

    ``bench`` is the benchmark it belongs to (built-in or a user's plugin).
    """
    prepared = MicroPrepared(
        name=bench.name,
        kernel=kernel,
        state=kernel.setup(shape, precision),
        threads=threads,
        points=bench.points(shape),
        footprint_bytes=bench.footprint_bytes(shape, precision),
    )
    prepared.run(1)
    return prepared


def verify_micro(
    bench: SizedBenchmark, kernel: MicroKernel, precision: str, threads: int
) -> Verification | None:
    """The compiled kernel against its reference over :data:`CHECK_REPETITIONS`
    repetitions at ``bench.check_shape``; None when it has no reference."""
    if kernel.reference is None:
        return None
    shape = bench.check_shape
    prepared = prepare_micro(bench, kernel, shape, precision, threads)
    prepared.run(CHECK_REPETITIONS - 1)
    state = kernel.setup(shape, precision)
    for r in range(prepared.repetitions_done):
        kernel.reference(state, r)
    expected = as_arrays(kernel.output(state, prepared.repetitions_done))
    got = as_arrays(prepared.output())
    return compare(bench.name, shape, precision, threads, got, expected, kernel.tolerance)
