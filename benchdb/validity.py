"""What a stored measurement must hold: the rules ``collect`` keeps when it writes one
(collectors/record.py), checked where measurements come from elsewhere (``import``) and
where they are read for a prediction (a row an older ``import`` let in).

Any row: a shape of positive extents, at least one thread and one point, samples that
are a list of finite numbers, finite statistics and rates.  A row marked valid also has
samples, none negative, a positive median, and at least one pass and one repetition;
``collect`` stores anything else as invalid, with the reason in ``flags``.  A sample may
be zero: a program's own timer, less a clock read's cost, reads a loop shorter than a
clock read as nothing, and the point's median still stands for it.

A row whose raw samples ``benchdb db prune`` dropped (:mod:`benchdb.db.prune`) holds
none but still counts them in ``pass_counts``: it stays valid, and its statistics
stand for it (:func:`samples_pruned`, :func:`sample_count`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _positive_ints(values: Any) -> bool:
    return (
        isinstance(values, list)
        and bool(values)
        and all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in values)
    )


def samples_pruned(row: Mapping[str, Any]) -> bool:
    """Whether ``row``'s raw samples were pruned: it holds none, yet its ``pass_counts``
    count some (a point that never got a sample counts none)."""
    counts = row.get("pass_counts")
    return (
        row.get("samples") == []
        and isinstance(counts, list)
        and all(isinstance(c, int) and c >= 0 for c in counts)
        and sum(counts) > 0
    )


def sample_count(row: Mapping[str, Any]) -> int:
    """How many samples ``row``'s statistics rest on, stored or pruned."""
    return sum(row["pass_counts"]) if samples_pruned(row) else len(row.get("samples") or [])


def measurement_problem(row: Mapping[str, Any]) -> str | None:
    """Why ``row`` (a measurement's fields) breaks the rules above, or None."""
    if not _positive_ints(row.get("shape")):
        return f"shape {row.get('shape')!r} is not a list of positive integers"
    for name in ("threads", "points", "footprint_bytes"):
        if not (_finite(row.get(name)) and row[name] >= 1):
            return f"{name} {row.get(name)!r} is not a positive integer"
    samples = row.get("samples")
    if not isinstance(samples, list) or not all(_finite(t) for t in samples):
        return "samples are not a list of finite numbers"
    for name in ("t_min", "t_median", "t_iqr", "t_cv"):
        if not _finite(row.get(name)):
            return f"{name} {row.get(name)!r} is not a finite number"
    for name in ("flop_rate", "byte_rate"):
        if row.get(name) is not None and not (_finite(row[name]) and row[name] > 0):
            return f"{name} {row[name]!r} is not a positive number"
    return valid_problem(row) if row.get("valid") else None


def valid_problem(row: Mapping[str, Any]) -> str | None:
    """Why ``row``, marked valid, cannot be used as a valid point, or None: a reader
    skips such a row (one an older ``import`` stored) instead of failing on it."""
    samples = row.get("samples")
    if not isinstance(samples, list) or not (samples or samples_pruned(row)):
        return "it is marked valid but has no samples"
    if not (_finite(row.get("t_median")) and row["t_median"] > 0):
        return "it is marked valid but its median time is not a positive number"
    if not all(_finite(t) and t >= 0 for t in [*samples, row.get("t_min", 0.0)]):
        return "it is marked valid but a time is negative"
    if not all(_finite(row.get(n, 1)) and row.get(n, 1) >= 1 for n in ("passes", "repetitions")):
        return "it is marked valid but has no pass or no repetition"
    return None
