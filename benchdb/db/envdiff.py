"""What changed in the software between two runs: the usual cause of a step.

An environment row's ``info`` JSON holds everything :mod:`benchdb.environment`
records (versions, threading layer, ``NUMBA_*``/``OMP_*`` variables, compile
options, git commit); it is flattened to dotted keys and compared key by key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .engine import Database
from .models import Environment


def flatten(info: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"env_vars": {"OMP_NUM_THREADS": "2"}}`` -> ``{"env_vars.OMP_NUM_THREADS": "2"}``."""
    flat: dict[str, Any] = {}
    for key, value in info.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            flat.update(flatten(value, f"{name}."))
        else:
            flat[name] = value
    return flat


def environment_diff(before: Environment, after: Environment) -> list[dict[str, Any]]:
    """One row ``{field, before, after}`` per differing field (empty when the same row)."""
    if before.id == after.id:
        return []
    a, b = flatten(before.info or {}), flatten(after.info or {})
    return [
        {"field": key, "before": a.get(key), "after": b.get(key)}
        for key in sorted(a.keys() | b.keys())
        if a.get(key) != b.get(key)
    ]


def environments_diff(db: Database, before_id: int, after_id: int) -> list[dict[str, Any]]:
    """:func:`environment_diff` of the environments with ids ``before_id`` and ``after_id``."""
    with db.reading() as s:
        before, after = s.get(Environment, before_id), s.get(Environment, after_id)
        if before is None or after is None:
            raise ValueError(f"no environment {before_id} or {after_id}")
        return environment_diff(before, after)
