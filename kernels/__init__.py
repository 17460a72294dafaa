"""Numba kernels, numpy references and per-kernel metadata (no database, no CLI).

Importing this package does not import numba: the built-in families
(:mod:`.builtin`) hold their steps as plain Python, and each benchmark
compiles its implementation on the first ``prepare()``.
"""

from .api import Benchmark, KernelInfo, Prepared, Shape
from .registry import BENCHMARKS, all_kernels, get_benchmark, kernel_info

__all__ = [
    "BENCHMARKS",
    "Benchmark",
    "KernelInfo",
    "Prepared",
    "Shape",
    "all_kernels",
    "get_benchmark",
    "kernel_info",
]
