"""Deterministic content hashes: sha256 of canonical JSON (never Python ``hash()``,
which is salted per process)."""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any


def _normalise(obj: Any) -> Any:
    if isinstance(obj, float):
        if math.isnan(obj) or math.isinf(obj):
            return repr(obj)
        return float(repr(obj))  # shortest round-trip representation
    if isinstance(obj, dict):
        return {str(k): _normalise(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_normalise(v) for v in obj]
    if hasattr(obj, "item"):  # numpy scalar
        return _normalise(obj.item())
    return obj


def canonical_json(obj: Any) -> str:
    """Sorted keys, no whitespace, NaN/inf as strings: the same bytes everywhere."""
    return json.dumps(_normalise(obj), sort_keys=True, separators=(",", ":"), allow_nan=False)


def content_hash(obj: Any) -> str:
    """Hex sha256 of :func:`canonical_json`."""
    return hashlib.sha256(canonical_json(obj).encode()).hexdigest()
