"""The contract a user's numba kernels plug into (``docs/plugins.md``).

A plugin is a Python module that lists :class:`PluginKernel` declarations in
``BENCHDB_KERNELS``.  Each declares the data set-up for a shape and
precision, the step (one repetition, a plain Python function that benchdb
compiles with the options of its own kernels, :mod:`.jit`, serially and with
``parallel=True``), an optional numpy reference, and the metadata that the
``kernel`` table stores.  benchdb generates the rest as for its own
micro-kernels, which its family modules declare the same way (:mod:`.builtin`,
:mod:`.micro`): the compiled repetition driver that reads the clock in
compiled code, the reference check before a sweep, the checksum.

This module imports neither numba nor numpy: a plugin can be listed, and its
kernels' footprints computed, without compiling anything.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from .api import DTYPE_BYTES, KernelError, KernelInfo, PointFailure, Shape, Verification
from .basics import PRECISIONS
from .geometry import Geometry, itemsize
from .layout import Layout
from .spec import LOOP_RE

CHECK_EXTENT = 13  # the reference check's extent (or min_extent where that is larger)


@dataclass(frozen=True)
class PluginKernel:
    """One of a user's kernels, as a plugin declares it.

    * ``setup(shape, precision) -> tuple``: the state, arrays and scalars, for one shape.
    * ``step(*state, r)``: one repetition (``r`` counts from 0), written with
      ``numba.prange`` where it may run in parallel; plain Python, compiled by benchdb.
    * ``reference(state, r)``: optional numpy version of one repetition, mutating
      ``state`` in place; without one the kernel is compiled and run but not checked.
    * ``output(state, repetitions_done)``: optional, the array or arrays the
      repetitions wrote (default: every array of the state).
    * ``flops``, ``loads``, ``stores``: per updated point, counted as paper 003
      Table I counts them (a divide is 5 flops; loads with reuse).
    * ``layout``: the extents, footprint and updated points (:class:`~.layout.Layout`).
    """

    name: str
    setup: Callable[[Shape, str], tuple]
    step: Callable[..., Any]
    flops: float
    loads: float
    stores: float
    layout: Layout
    reference: Callable[[tuple, int], None] | None = None
    output: Callable[[tuple, int], Any] | None = None
    description: str = ""
    family: str | None = None
    precisions: tuple[str, ...] = PRECISIONS
    check_shape: Shape | None = None
    tolerance: float | None = None  # relative; default: verify.TOLERANCE of the precision

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not LOOP_RE.fullmatch(self.name):
            raise KernelError(f"plugin kernel name {self.name!r}: use letters, digits, _ and -")
        where = f"plugin kernel {self.name!r}"
        for what in ("setup", "step"):
            if not callable(getattr(self, what)):
                raise KernelError(f"{where}: {what} must be a function")
        for what in ("reference", "output"):
            value = getattr(self, what)
            if value is not None and not callable(value):
                raise KernelError(f"{where}: {what} must be a function or None")
        if not isinstance(self.layout, Layout):
            raise KernelError(f"{where}: layout must be a benchdb.kernels.layout.Layout")
        for what in ("flops", "loads", "stores"):
            value = getattr(self, what)
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise KernelError(f"{where}: {what} = {value!r} must be a non-negative number")
        bad = [p for p in self.precisions if p not in DTYPE_BYTES]
        if bad or not self.precisions:
            raise KernelError(f"{where}: precisions must be float64 and/or float32")


def _code_bytes(fn: Callable[..., Any]) -> bytes:
    """The source of the module that defines ``fn`` (or its bytecode where there is none)."""
    fn = getattr(fn, "py_func", fn)  # a numba dispatcher: the Python function it wraps
    try:
        path = inspect.getsourcefile(fn)
        if path:
            with open(path, "rb") as f:
                return f.read()
    except (OSError, TypeError):
        pass
    code = getattr(fn, "__code__", None)
    return code.co_code if code is not None else repr(fn).encode()


def source_hash(kernel: PluginKernel) -> str:
    """sha256 of the source files of the kernel's functions (each file once)."""
    parts = [kernel.setup, kernel.step, kernel.reference, kernel.output]
    sources = dict.fromkeys(_code_bytes(fn) for fn in parts if fn is not None)
    digest = hashlib.sha256()
    for text in sources:
        digest.update(hashlib.sha256(text).digest())
    return digest.hexdigest()


def _all_arrays(state: tuple, repetitions_done: int) -> tuple[Any, ...]:
    import numpy as np

    return tuple(x for x in state if isinstance(x, np.ndarray))


@dataclass(frozen=True)
class PluginBenchmark:
    """A :class:`~.api.Benchmark` for one plugin kernel, named ``<plugin>.<kernel>``."""

    plugin: str
    declared: PluginKernel
    source_hash: str

    @property
    def name(self) -> str:
        return f"{self.plugin}.{self.declared.name}"

    @cached_property
    def kernels(self) -> tuple[KernelInfo, ...]:
        d = self.declared
        return (
            KernelInfo(
                name=self.name,
                family=d.family or self.plugin,
                ndim=d.layout.ndim,
                flops_per_point=float(d.flops),
                loads_per_point=float(d.loads),
                stores_per_point=float(d.stores),
                arrays=d.layout.arrays or 0,
                description=d.description or f"kernel {d.name} of plugin {self.plugin}",
                extra={"plugin": self.plugin, "dtypes": list(d.precisions)},
                origin="plugin",
                source_hash=self.source_hash,
                layout=d.layout,
            ),
        )

    @cached_property
    def geometry(self) -> Geometry:
        return self.declared.layout.geometry()

    @property
    def ndim(self) -> int:
        return self.declared.layout.ndim

    @property
    def precisions(self) -> tuple[str, ...]:
        return self.declared.precisions

    @property
    def max_threads(self) -> int | None:
        return None  # compiled serially and with prange, as the built-ins: any thread count

    @property
    def check_shape(self) -> Shape:
        if self.declared.check_shape is not None:
            return tuple(self.declared.check_shape)
        low = self.declared.layout.min_extent
        return tuple(max(low, CHECK_EXTENT + 2 * d) for d in range(self.ndim))

    def points(self, shape: Shape) -> int:
        return int(self.geometry.points(self.geometry.validate(shape)))

    def kernel_points(self, shape: Shape) -> dict[str, int]:
        return {self.name: self.points(shape)}

    def footprint_bytes(self, shape: Shape, precision: str) -> int:
        return self.geometry.footprint_bytes(shape, precision)

    @cached_property
    def _micro(self) -> Any:
        """The :class:`~.micro.MicroKernel` (compiles on first use: imports numba)."""
        from .micro import MicroKernel

        d = self.declared
        return MicroKernel.declared(
            d.setup, d.step, d.reference, d.output or _all_arrays, d.tolerance
        )

    def prepare(self, shape: Shape, precision: str, threads: int) -> Any:
        from .micro import prepare_micro

        shape = self.geometry.validate(shape)
        itemsize(precision)
        return _guarded(
            self.name, lambda: prepare_micro(self, self._micro, shape, precision, threads)
        )

    def verify(self, precision: str, threads: int) -> Verification:
        """Compile and check against the reference at :attr:`check_shape`; without a
        reference, compile and run once (a kernel that does not compile fails here)."""
        from .micro import prepare_micro, verify_micro

        shape = self.check_shape
        self.declared.layout.check(shape, itemsize(precision))
        try:
            found = _guarded(self.name, lambda: verify_micro(self, self._micro, precision, threads))
            if found is None:
                _guarded(
                    self.name, lambda: prepare_micro(self, self._micro, shape, precision, threads)
                )
                return Verification(self.name, shape, precision, threads, "no reference to check")
            return found
        except PointFailure as exc:
            raise KernelError(
                f"plugin kernel {self.name} failed at {'x'.join(map(str, shape))}: "
                f"{exc.reason}; fix the plugin (docs/plugins.md)"
            ) from None


def _guarded(name: str, action: Callable[[], Any]) -> Any:
    """``action()``, with any error of the user's code (set-up, compilation, run) as a
    :class:`PointFailure` naming it; a :class:`KernelError` (wrong results) passes."""
    try:
        return action()
    except KernelError:
        raise
    except Exception as exc:  # the user's code may raise anything
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise PointFailure(f"{type(exc).__name__}: {first}"[:400]) from exc


def plugin_benchmarks(plugin: str, declared: Sequence[Any]) -> list[PluginBenchmark]:
    """Benchmarks of the :class:`PluginKernel` list a plugin declares."""
    if isinstance(declared, str | bytes) or not isinstance(declared, Sequence) or not declared:
        raise KernelError(
            f"plugin {plugin!r}: BENCHDB_KERNELS must be a non-empty list of PluginKernel"
        )
    out = []
    for d in declared:
        if not isinstance(d, PluginKernel):
            raise KernelError(
                f"plugin {plugin!r}: BENCHDB_KERNELS holds {type(d).__name__}, not PluginKernel"
            )
        out.append(PluginBenchmark(plugin, d, source_hash(d)))
    names = [b.name for b in out]
    if len(set(names)) != len(names):
        raise KernelError(f"plugin {plugin!r} declares a kernel name twice: {names}")
    return out


__all__ = ["Layout", "PluginKernel"]
