"""The registry of benchmarks the collectors can run: the built-ins, and a catalog
that user code extends.

The built-ins are the families of :mod:`.builtin`, each registering its own
kernels.  Each entry is cheap to import: the compiled implementation (and numba)
is imported only when ``prepare()`` is first called, so the predictor can list
kernels and compute footprints without a JIT import.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from . import builtin
from .api import Benchmark, KernelError, KernelInfo


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


BUILTIN = Catalog({b.name: b for b in builtin.BENCHMARKS})
BENCHMARKS: Mapping[str, Benchmark] = BUILTIN.benchmarks

_KERNELS: dict[str, KernelInfo] = {k.name: k for k in BUILTIN.kernels()}


def get_benchmark(name: str) -> Benchmark:
    """The built-in benchmark called ``name``; ``KeyError`` listing the valid names otherwise."""
    return BUILTIN.get(name)


def all_kernels() -> list[KernelInfo]:
    """Every kernel any benchmark times, in registry order."""
    return BUILTIN.kernels()


def kernel_info(name: str) -> KernelInfo:
    """Metadata of kernel ``name``; ``KeyError`` listing the valid names otherwise."""
    try:
        return _KERNELS[name]
    except KeyError:
        raise KeyError(f"unknown kernel {name!r}; valid: {', '.join(_KERNELS)}") from None
