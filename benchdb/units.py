"""Human units for tables (storage is SI: seconds, bytes, flop/s, B/s)."""

from __future__ import annotations

import math
from collections.abc import Sequence


def _scaled(value: float, base: float, units: list[str]) -> tuple[float, str]:
    i = 0
    while abs(value) >= base and i < len(units) - 1:
        value /= base
        i += 1
    return value, units[i]


def fmt_bytes(n: float | None) -> str:
    if n is None or (isinstance(n, float) and math.isnan(n)):
        return "-"
    v, u = _scaled(float(n), 1024.0, ["B", "KiB", "MiB", "GiB", "TiB"])
    return f"{v:.0f} {u}" if u == "B" else f"{v:.3g} {u}"


def fmt_rate(r: float | None, unit: str = "flop/s") -> str:
    if r is None or (isinstance(r, float) and math.isnan(r)):
        return "-"
    v, p = _scaled(float(r), 1000.0, ["", "k", "M", "G", "T", "P"])
    return f"{v:.3g} {p}{unit}"


def fmt_seconds(t: float | None) -> str:
    if t is None or (isinstance(t, float) and math.isnan(t)):
        return "-"
    t = float(t)
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if abs(t) >= scale:
            return f"{t / scale:.3g} {unit}"
    return f"{t / 1e-9:.3g} ns"


DAY = 86400.0


def fmt_duration(t: float) -> str:
    """A wall-clock span as people say it: ``42 s``, ``5 min 22 s``, ``1 h 5 min``, and
    from two days on ``3.5 d`` or ``1.16e+303 d``: bounded in length for any float (a
    budget of ``1e308`` s is not printed in 300 digits), ``-`` for NaN or infinity."""
    if not math.isfinite(t):
        return "-"
    if t < 100:
        return fmt_seconds(t)
    if t >= 2 * DAY:
        return f"{t / DAY:.3g} d"
    minutes, secs = divmod(round(t), 60)
    if minutes < 60:
        return f"{minutes} min {secs} s" if secs else f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"


def fmt_change(ratio: float | None) -> str:
    """A ratio of times as a change: ``+12.3%`` within a factor of two, else ``×63`` or
    ``×1/4``, which read better than ``+6200%`` or ``-75%``."""
    if ratio is None or not math.isfinite(ratio) or ratio <= 0:
        return "-"
    if 0.5 <= ratio <= 2:
        return f"{(ratio - 1) * 100:+.1f}%"
    return f"×{ratio:.3g}" if ratio > 2 else f"×1/{1 / ratio:.3g}"


def fmt_interval(low: float | None, high: float | None) -> str:
    """An interval of ratios as changes: ``+3.1%..+12.0%``."""
    return f"{fmt_change(low)}..{fmt_change(high)}"


def fmt_ids(ids: Sequence[int], shown: int = 3) -> str:
    """Run ids for a person: all of a few, else the first and last ``shown`` and the count
    (a year of history fits hundreds of runs into one fit)."""
    if len(ids) <= 2 * shown:
        return ", ".join(map(str, ids))
    head, tail = ", ".join(map(str, ids[:shown])), ", ".join(map(str, ids[-shown:]))
    return f"{head} … {tail} ({len(ids)} runs)"
