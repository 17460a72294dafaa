"""What an analytic baseline is, and the registry of them.

A baseline is fitted per machine from all its kernels' curves (``fit``,
JSON-able parameters) and predicts a kernel's rate at any footprint from the
kernel's counts alone (``evaluate``, in the kernel's unit, NaN where it has
nothing to say: eq. 5 for a kernel without flops).  Paper 003 §IV judges the
lookup against such models; so does ``benchdb validate``.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from ...plugin_registry import Registry
from ..basis import RateBasis
from ..machine_data import MachineData


class Baseline(Protocol):
    """One analytic model of a kernel's rate from its counts and the machine."""

    name: str
    summary: str  # one line for listings

    def fit(self, data: MachineData) -> dict[str, Any]: ...

    def evaluate(
        self, params: dict[str, Any], basis: RateBasis, footprint: np.ndarray
    ) -> np.ndarray: ...


BASELINES: Registry[Baseline] = Registry("baseline")
"""The baselines by name (each module registers its own)."""
