"""What an interpolation method is, and the registry of them.

A method turns a kernel's measured curve -- ``u``, the natural log of the
footprints, sorted, and ``y``, the rates -- into JSON-able parameters
(``fit``, with ``fit_rms_rel``: its own relative fit error), and those
parameters into rates at any log footprint (``evaluate``, numpy only, so a
stored fit answers without scipy).  Paper 003 §V-VI interpolates linearly and
by the logarithmic curve of eq. 10.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from ...plugin_registry import Registry


class Method(Protocol):
    """One interpolation of rate against log footprint."""

    name: str
    min_points: int  # fewest measured footprints it can be fitted to
    summary: str  # one line for listings

    def fit(self, u: np.ndarray, y: np.ndarray) -> dict[str, Any]: ...

    def evaluate(self, params: dict[str, Any], u: np.ndarray) -> np.ndarray: ...


METHODS: Registry[Method] = Registry("method")
"""The methods by name, as ``--method`` chooses them (each module registers its own)."""

DEFAULT_METHOD = "pchip"
