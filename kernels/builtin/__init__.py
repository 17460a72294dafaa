"""The built-in kernels, one module per family, each registering itself.

A family module holds everything about its kernels: the metadata the
``kernel`` table stores, the geometry (points and footprint of a shape), the
data set-up, the step and its numpy reference, and lists them in
``BENCHDB_KERNELS`` (:class:`~..declared.BuiltinKernel`, the built-in twin of a
plugin's :class:`~..plugin.PluginKernel`), with ``ORDER``, its place among the
families.  Every module of this package is a family: adding a built-in kernel
is adding a module here (docs/design.md, "Built-in kernels").  The shallow-water
model is the one family that is a package (:mod:`.shallow` says why).

Counting conventions, shared by all families so that rates compare:

* ``flops_per_point`` are *reference* flops as in paper 003 (Osprey et al.,
  HPCS 2014) Table I: add, subtract and multiply count 1, a divide counts 5.
* ``loads_per_point``/``stores_per_point`` count array elements per updated
  point *with reuse along the contiguous index* (paper 003, Table I: ``p(i,j)``
  and ``p(i+1,j)`` share one load stream, ``p(i,j+1)`` is another).
* ``arrays`` is the number of arrays in the *footprint*.

A family module imports no numba (its steps take ``prange`` from
:mod:`..loops`): the registry imports them all, and the predictor must not pay
for a JIT import.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

from ..api import Benchmark


def families() -> list[ModuleType]:
    """Every family module of this package, in their ``ORDER``."""
    found = [
        importlib.import_module(f"{__name__}.{info.name}")
        for info in pkgutil.iter_modules(__path__)
    ]
    return sorted(found, key=lambda module: module.ORDER)


BENCHMARKS: tuple[Benchmark, ...] = tuple(
    b for module in families() for b in module.BENCHDB_KERNELS
)
