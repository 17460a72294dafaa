"""The words every kernel module shares: a shape, the element sizes, and the error that
names a fix.  Nothing else lives here, so that :mod:`.geometry` and :mod:`.layout`
import it, and :mod:`.api` imports them, without a cycle."""

from __future__ import annotations

from collections.abc import Mapping

Shape = tuple[int, ...]

DTYPE_BYTES: Mapping[str, int] = {"float64": 8, "float32": 4}
PRECISIONS: tuple[str, ...] = tuple(DTYPE_BYTES)  # what every built-in kernel runs in


class KernelError(ValueError):
    """A user's spec, program or plugin cannot be used; the message names the fix.

    The collectors turn it into a one-line error with exit status 2 before
    anything is stored.
    """
