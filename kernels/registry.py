"""The registry of benchmarks the collectors can run.

Each entry is cheap to import: the compiled implementation (and numba) is
imported only when ``prepare()`` is first called, so the predictor can list
kernels and compute footprints without a JIT import.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import catalog, geometry
from .api import Benchmark, KernelError, KernelInfo, Prepared, Shape, Verification
from .geometry import Geometry


@dataclass(frozen=True)
class LazyBenchmark:
    """A :class:`~.api.Benchmark` whose implementation module loads on first use.

    ``module`` names a sibling module exposing
    ``prepare(benchmark, shape, precision, threads) -> Prepared`` and
    ``verify(benchmark, precision, threads) -> Verification`` (the compiled
    code against its numpy reference at ``check_shape``); both receive this
    object, so they know the name and the geometry.
    """

    name: str
    kernels: Sequence[KernelInfo]
    geometry: Geometry
    module: str
    check_shape: Shape
    precisions: tuple[str, ...] = catalog.PRECISIONS
    max_threads: int | None = None
    kernel_geometry: Mapping[str, Geometry] = field(default_factory=dict)  # where not ``geometry``

    @property
    def ndim(self) -> int:
        return self.geometry.ndim

    def footprint_bytes(self, shape: Shape, precision: str) -> int:
        return self.geometry.footprint_bytes(shape, precision)

    def points(self, shape: Shape) -> int:
        """Points each repetition updates, the same for all the benchmark's kernels."""
        return self.geometry.points(self.geometry.validate(shape))

    def geometry_of(self, kernel: str) -> Geometry:
        """The geometry kernel ``kernel`` is rated by: the benchmark's, unless it updates
        other points (the shallow loops over the full arrays)."""
        return self.kernel_geometry.get(kernel, self.geometry)

    def kernel_points(self, shape: Shape) -> dict[str, int]:
        shape = self.geometry.validate(shape)
        return {k.name: self.geometry_of(k.name).points(shape) for k in self.kernels}

    def prepare(self, shape: Shape, precision: str, threads: int = 1) -> Prepared:
        shape = self.geometry.validate(shape)
        geometry.itemsize(precision)
        if not isinstance(threads, int) or threads < 1:
            raise ValueError(f"threads must be a positive integer, not {threads!r}")
        return self._impl().prepare(self, shape, precision, threads)

    def verify(self, precision: str, threads: int) -> Verification:
        return self._impl().verify(self, precision, threads)

    def _impl(self) -> Any:
        return importlib.import_module(f".{self.module}", __package__)


def _micro(kernel: KernelInfo, geom: Geometry, check_shape: Shape) -> LazyBenchmark:
    return LazyBenchmark(kernel.name, (kernel,), geom, "micro", check_shape)


_ENTRIES: tuple[LazyBenchmark, ...] = (
    LazyBenchmark(
        "shallow",
        catalog.SHALLOW_KERNELS,
        geometry.SHALLOW,
        "shallow",
        (33, 20),
        kernel_geometry=dict.fromkeys(catalog.SHALLOW_FULL_ARRAY, geometry.SHALLOW_FULL),
    ),
    _micro(catalog.STENCIL2D5, geometry.STENCIL2D, (13, 17)),
    _micro(catalog.STENCIL3D7, geometry.STENCIL3D, (7, 9, 11)),
    _micro(catalog.JACOBI2D, geometry.JACOBI, (13, 17)),
    _micro(catalog.TRIDIAG, geometry.TRIDIAG, (23, 10)),
    *(_micro(k, geometry.stream(k.arrays), (1001,)) for k in catalog.STREAM_KERNELS),
)


@dataclass(frozen=True)
class Catalog:
    """The benchmarks one collection can run: the built-ins and any user code loaded.

    ``sources`` records how each user benchmark was loaded (a spec file, a
    plugin module, an entry point), so that resuming a run loads the same
    code again (:mod:`.sources`).
    """

    benchmarks: Mapping[str, Benchmark]
    sources: tuple[Mapping[str, Any], ...] = field(default=())
    source_of: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # by benchmark

    def get(self, name: str) -> Benchmark:
        """The benchmark called ``name``; ``KeyError`` listing the valid names otherwise."""
        try:
            return self.benchmarks[name]
        except KeyError:
            valid = ", ".join(self.benchmarks)
            raise KeyError(f"unknown benchmark {name!r}; valid: {valid}") from None

    def kernels(self) -> list[KernelInfo]:
        """Every kernel any benchmark times, in catalog order."""
        return [k for b in self.benchmarks.values() for k in b.kernels]

    def benchmark_of(self) -> dict[str, str]:
        """Kernel name -> the benchmark that times it."""
        return {k.name: b.name for b in self.benchmarks.values() for k in b.kernels}

    def extended(self, benchmarks: Iterable[Benchmark], source: Mapping[str, Any]) -> Catalog:
        """This catalog plus ``benchmarks`` loaded from ``source``; a name that is already
        taken (by a built-in or by other user code) raises :class:`KernelError`."""
        out = dict(self.benchmarks)
        source_of = dict(self.source_of)
        kernels = self.benchmark_of()
        families = {k.family: b.name for b in out.values() for k in b.kernels}
        for bench in benchmarks:
            names = (bench.name, *(k.name for k in bench.kernels))
            clash = next((n for n in names if n in kernels or n in out), None)
            family = next((k.family for k in bench.kernels if k.family in families), None)
            if clash or family:
                taken = clash or family
                raise KernelError(
                    f"{_describe(source)} declares {taken!r}, a name that is already taken "
                    f"(by {kernels.get(taken) or families.get(taken) or taken}); rename it"
                )
            out[bench.name] = bench
            source_of[bench.name] = source
            kernels.update({k.name: bench.name for k in bench.kernels})
        return Catalog(out, (*self.sources, dict(source)), source_of)


def _describe(source: Mapping[str, Any]) -> str:
    return " ".join(f"{k} {v}" for k, v in source.items() if k != "version")


BUILTIN = Catalog({b.name: b for b in _ENTRIES})
BENCHMARKS: Mapping[str, Benchmark] = BUILTIN.benchmarks

_KERNELS: dict[str, KernelInfo] = {k.name: k for k in catalog.ALL_KERNELS}


def get_benchmark(name: str) -> Benchmark:
    """The built-in benchmark called ``name``; ``KeyError`` listing the valid names otherwise."""
    return BUILTIN.get(name)


def all_kernels() -> list[KernelInfo]:
    """Every kernel any benchmark times, in registry order."""
    return list(catalog.ALL_KERNELS)


def kernel_info(name: str) -> KernelInfo:
    """Metadata of kernel ``name``; ``KeyError`` listing the valid names otherwise."""
    try:
        return _KERNELS[name]
    except KeyError:
        raise KeyError(f"unknown kernel {name!r}; valid: {', '.join(_KERNELS)}") from None
