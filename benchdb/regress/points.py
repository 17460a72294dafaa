"""What identifies a point across runs, shared by ``compare`` and ``history``: kept apart
from :mod:`.compare` so that a history (no statistics test) loads no scipy."""

from __future__ import annotations

POINT_KEY = ["kernel", "shape_key", "threads", "precision", "context"]


def version_change(before: str, after: str) -> str:
    """``"1a2b3c4d->5e6f7a8b"`` when a kernel's version differs between two runs, else ``""``."""
    return "" if before == after else f"{before[:8]}->{after[:8]}"
