"""Numba kernels, numpy references and per-kernel metadata (no database, no CLI).

Importing this package imports neither numba nor numpy's compiled kernels:
the registry and metadata are pure Python, and each benchmark loads its
compiled implementation on the first ``prepare()``.
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
