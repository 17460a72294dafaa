"""The declaration a built-in kernel family gives, and the benchmark it makes.

A family module of :mod:`.builtin` lists its kernels in ``BENCHDB_KERNELS``, as a
user's plugin does (docs/plugins.md, :mod:`.plugin`): the data set-up, one
repetition of the step, its numpy reference and the array the repetitions
write, compiled, driven and checked by the same code as a plugin's
(:mod:`.micro`).  What differs is the metadata: a built-in gives its
:class:`~.api.KernelInfo` and :class:`~.geometry.Geometry` as they are, where a
plugin gives counts and a :class:`~.layout.Layout`, which would make the stored
kernel another version (a layout and a source hash are part of a plugin
kernel's version, ``benchdb.db.repo.kernel_version``).

Nothing here imports numba: the registry lists the built-ins, and the predictor
computes their footprints, without compiling anything.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from .api import KernelInfo, Shape, Verification
from .basics import PRECISIONS
from .geometry import Geometry, itemsize


def builtin_info(
    name: str,
    family: str,
    ndim: int,
    counts: tuple[float, float, float],
    arrays: int,
    description: str,
    *,
    extra: Mapping[str, object] | None = None,
    **more: Any,
) -> KernelInfo:
    """A built-in kernel's metadata: ``counts`` are its (flops, loads, stores) per
    updated point, counted as :mod:`.builtin` says; every built-in runs in both
    precisions, which its ``extra`` records last."""
    flops, loads, stores = counts
    return KernelInfo(
        name=name,
        family=family,
        ndim=ndim,
        flops_per_point=flops,
        loads_per_point=loads,
        stores_per_point=stores,
        arrays=arrays,
        description=description,
        extra={**(extra or {}), "dtypes": PRECISIONS},
        **more,
    )


class ByGeometry:
    """The shape arithmetic of a built-in benchmark, from its :class:`Geometry`."""

    geometry: Geometry
    kernels: tuple[KernelInfo, ...]
    precisions: tuple[str, ...] = PRECISIONS
    max_threads: int | None = None  # any thread count

    @property
    def ndim(self) -> int:
        return self.geometry.ndim

    def footprint_bytes(self, shape: Shape, precision: str) -> int:
        return self.geometry.footprint_bytes(shape, precision)

    def points(self, shape: Shape) -> int:
        """Points each repetition updates, the same for all the benchmark's kernels."""
        return self.geometry.points(self.geometry.validate(shape))

    def geometry_of(self, kernel: str) -> Geometry:
        """The geometry kernel ``kernel`` is rated by (the benchmark's, unless a family
        with kernels over other points says otherwise)."""
        return self.geometry

    def kernel_points(self, shape: Shape) -> dict[str, int]:
        shape = self.geometry.validate(shape)
        return {k.name: self.geometry_of(k.name).points(shape) for k in self.kernels}

    def checked(self, shape: Shape, precision: str, threads: int) -> Shape:
        """``shape`` as a tuple of ints; ValueError naming a bad shape, precision or
        thread count before anything is allocated."""
        shape = self.geometry.validate(shape)
        itemsize(precision)
        if not isinstance(threads, int) or threads < 1:
            raise ValueError(f"threads must be a positive integer, not {threads!r}")
        return shape


@dataclass(frozen=True, kw_only=True)
class BuiltinKernel(ByGeometry):
    """One built-in kernel, timed in isolation: a :class:`~.api.Benchmark` of its own.

    * ``setup(shape, precision) -> tuple``: the state, arrays first, then scalars
      typed in the working precision.
    * ``step(*state, r)``: one repetition, plain Python with ``prange`` from
      :mod:`.loops`; compiled serially and with ``parallel=True`` on first use.
    * ``reference(state, r)``: the same repetition in numpy, mutating ``state``,
      written with whole-array slices so that it shares no code with the step.
    * ``output(state, repetitions_done)``: the array the repetitions wrote.
    """

    info: KernelInfo
    geometry: Geometry
    check_shape: Shape
    setup: Callable[[Shape, str], tuple]
    step: Callable[..., Any]
    reference: Callable[[tuple, int], None]
    output: Callable[[tuple, int], Any]

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def kernels(self) -> tuple[KernelInfo, ...]:
        return (self.info,)

    @cached_property
    def compiled(self) -> Any:
        """The :class:`~.micro.MicroKernel` (imports numba; compiles on first call)."""
        from .micro import MicroKernel

        return MicroKernel.declared(self.setup, self.step, self.reference, self.output)

    def prepare(self, shape: Shape, precision: str, threads: int = 1) -> Any:
        """Set up ``shape`` and run one untimed repetition (compilation, first touch)."""
        from .micro import prepare_micro

        shape = self.checked(shape, precision, threads)
        return prepare_micro(self, self.compiled, shape, precision, threads)

    def verify(self, precision: str, threads: int) -> Verification | None:
        from .micro import verify_micro

        return verify_micro(self, self.compiled, precision, threads)


def ping_pong_output(state: tuple, done: int) -> Any:
    """The array written last by a step that alternates two arrays: repetition 0
    writes the second."""
    return state[1] if done % 2 == 1 else state[0]


def output_at(index: int) -> Callable[[tuple, int], Any]:
    """The output of a step that always writes ``state[index]``."""
    return lambda state, done: state[index]
