"""The registry of benchmarks the collectors can run.

Each entry is cheap to import: the compiled implementation (and numba) is
imported only when ``prepare()`` is first called, so the predictor can list
kernels and compute footprints without a JIT import.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass

from . import catalog, geometry
from .api import Benchmark, KernelInfo, Prepared, Shape
from .geometry import Geometry


@dataclass(frozen=True)
class LazyBenchmark:
    """A :class:`~.api.Benchmark` whose implementation module loads on first use.

    ``module`` names a sibling module exposing
    ``prepare(benchmark, shape, precision, threads) -> Prepared``; it receives
    this object, so it knows the name and the geometry.
    """

    name: str
    kernels: Sequence[KernelInfo]
    geometry: Geometry
    module: str

    @property
    def ndim(self) -> int:
        return self.geometry.ndim

    def footprint_bytes(self, shape: Shape, precision: str) -> int:
        return self.geometry.footprint_bytes(shape, precision)

    def points(self, shape: Shape) -> int:
        """Points each repetition updates (``Prepared.points``)."""
        return self.geometry.points(self.geometry.validate(shape))

    def prepare(self, shape: Shape, precision: str, threads: int = 1) -> Prepared:
        shape = self.geometry.validate(shape)
        geometry.itemsize(precision)
        if not isinstance(threads, int) or threads < 1:
            raise ValueError(f"threads must be a positive integer, not {threads!r}")
        impl = importlib.import_module(f".{self.module}", __package__)
        return impl.prepare(self, shape, precision, threads)


def _micro(kernel: KernelInfo, geom: Geometry) -> LazyBenchmark:
    return LazyBenchmark(kernel.name, (kernel,), geom, "micro")


_ENTRIES: tuple[LazyBenchmark, ...] = (
    LazyBenchmark("shallow", catalog.SHALLOW_KERNELS, geometry.SHALLOW, "shallow"),
    _micro(catalog.STENCIL2D5, geometry.STENCIL2D),
    _micro(catalog.STENCIL3D7, geometry.STENCIL3D),
    _micro(catalog.JACOBI2D, geometry.JACOBI),
    _micro(catalog.TRIDIAG, geometry.TRIDIAG),
    *(_micro(k, geometry.stream(k.arrays)) for k in catalog.STREAM_KERNELS),
)

BENCHMARKS: dict[str, Benchmark] = {b.name: b for b in _ENTRIES}

_KERNELS: dict[str, KernelInfo] = {k.name: k for k in catalog.ALL_KERNELS}


def get_benchmark(name: str) -> Benchmark:
    """The benchmark called ``name``; ``KeyError`` listing the valid names otherwise."""
    try:
        return BENCHMARKS[name]
    except KeyError:
        raise KeyError(f"unknown benchmark {name!r}; valid: {', '.join(BENCHMARKS)}") from None


def all_kernels() -> list[KernelInfo]:
    """Every kernel any benchmark times, in registry order."""
    return list(catalog.ALL_KERNELS)


def kernel_info(name: str) -> KernelInfo:
    """Metadata of kernel ``name``; ``KeyError`` listing the valid names otherwise."""
    try:
        return _KERNELS[name]
    except KeyError:
        raise KeyError(f"unknown kernel {name!r}; valid: {', '.join(_KERNELS)}") from None
