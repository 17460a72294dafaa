"""The words benchdb judges with, as enums: what a comparison says of a kernel, and
what the collector says of a point.  Each member is its own string (``StrEnum``), so
rows, exports and ``--json`` carry the same words as before and compare equal to them.
"""

from __future__ import annotations

from enum import StrEnum


class Verdict(StrEnum):
    """What a comparison (``compare``, ``ab``, ``history``) says of a kernel."""

    SLOWER = "slower"
    FASTER = "faster"
    NOISY = "noisy"  # the interval straddles the threshold band: no call either way
    UNCHANGED = "unchanged"
    DISTURBED = "disturbed"  # ab: the host was too busy to say (fails nothing)


class Flag(StrEnum):
    """What the collector says of a stored point (``measurement.flags``)."""

    NOISY = "noisy"  # its clean samples scatter beyond the noise limit
    DISTURBED = "disturbed"  # fewer clean samples than asked for within the retake bound


MOVED = (Verdict.SLOWER, Verdict.FASTER)
"""The verdicts that say the code's speed changed."""
