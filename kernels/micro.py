"""Timing driver and registry entries of the micro-kernels (stencils, Jacobi,
tridiagonal, STREAM).

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

from . import fields, reference
from .api import Shape, Verification
from .clock import seconds, tick
from .jit import Variants, serial
from .registry import LazyBenchmark
from .stencil import JACOBI2D, STENCIL2D5, STENCIL3D7
from .stream import STREAM
from .tridiag import TRIDIAG
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


def _ping_pong_output(state: tuple, done: int) -> np.ndarray:
    """The array written last: repetition 0 writes the second array."""
    return state[1] if done % 2 == 1 else state[0]


def _output_at(index: int) -> Callable[[tuple, int], np.ndarray]:
    return lambda state, done: state[index]


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


def _stream_kernel(op: str, output: int) -> MicroKernel:
    return MicroKernel(
        setup=lambda shape, precision: fields.stream(op, shape[0], precision),
        step=STREAM[op],
        reference=getattr(reference, f"stream_{op}"),
        output=_output_at(output),
    )


KERNELS: dict[str, MicroKernel] = {
    "stencil2d5": MicroKernel(fields.stencil, STENCIL2D5, reference.stencil, _ping_pong_output),
    "stencil3d7": MicroKernel(fields.stencil, STENCIL3D7, reference.stencil, _ping_pong_output),
    "jacobi2d": MicroKernel(fields.jacobi, JACOBI2D, reference.jacobi2d, _ping_pong_output),
    "tridiag": MicroKernel(fields.tridiag, TRIDIAG, reference.tridiag, _output_at(3)),
    "stream.copy": _stream_kernel("copy", 1),
    "stream.scale": _stream_kernel("scale", 0),
    "stream.add": _stream_kernel("add", 2),
    "stream.triad": _stream_kernel("triad", 0),
    "stream.sum": _stream_kernel("sum", 1),
    "stream.fill": _stream_kernel("fill", 0),
}


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
    bench: LazyBenchmark | Any, kernel: MicroKernel, shape: Shape, precision: str, threads: int
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
    bench: LazyBenchmark | Any, kernel: MicroKernel, precision: str, threads: int
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


def prepare(bench: LazyBenchmark, shape: Shape, precision: str, threads: int) -> MicroPrepared:
    """A built-in micro-kernel, set up with one untimed repetition done."""
    return prepare_micro(bench, KERNELS[bench.name], shape, precision, threads)


def verify(bench: LazyBenchmark, precision: str, threads: int) -> Verification | None:
    return verify_micro(bench, KERNELS[bench.name], precision, threads)


def jacobi_solve(
    shape: Shape, precision: str, tolerance: float, max_iterations: int, threads: int = 1
) -> tuple[np.ndarray, int]:
    """Jacobi iterations on the Poisson problem of :func:`.fields.jacobi` until the
    squared update norm drops to ``tolerance``; (solution, iterations)."""
    state = fields.jacobi(shape, precision)
    step = JACOBI2D.for_threads(threads)
    iterations = iterate_until(step, state, state[-1], tolerance, max_iterations)
    return _ping_pong_output(state, iterations), iterations
