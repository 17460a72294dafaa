"""The kind of a path the user gives, checked before it is opened.

Reading a FIFO waits for a writer that never comes (a hang with no output), a device
reads as endless or empty data, and a folder fails deep inside a parser; each is one
line naming the fix instead.  A missing path passes: its reader says so in its own words.
"""

from __future__ import annotations

import stat
from collections.abc import Callable, Iterable
from pathlib import Path

from .errors import UserError

_KINDS: tuple[tuple[Callable[[int], bool], str], ...] = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
    (stat.S_ISSOCK, "a socket"),
)


def special_kind(path: str | Path) -> str | None:
    """What ``path`` is if it exists and is not a regular file (through symbolic links),
    e.g. ``"a FIFO (named pipe)"``; None for a regular file or nothing there."""
    try:
        mode = Path(path).expanduser().stat().st_mode
    except (OSError, ValueError):  # missing, unreachable, or a NUL in the name
        return None
    return next((name for test, name in _KINDS if test(mode)), None)


def check_input_file(path: str | Path, option: str, *, module_ok: bool = False) -> Path:
    """``path`` (``~`` expanded) unless it is a FIFO, a device, a socket or a folder.
    ``module_ok``: a bare name (no ``/``, no ``.py``) may be a module whose package is a
    folder of that name (``--plugin mykernels``)."""
    kind = special_kind(path)
    text = str(path)
    module = module_ok and "/" not in text and not text.endswith(".py")
    if kind is not None and not (module and kind == "a folder"):
        raise UserError(f"{option} {path} is {kind}, not a file; give the path of a regular file")
    return Path(path).expanduser()


def check_input_files(paths: Iterable[str | Path], option: str, *, module_ok: bool = False) -> None:
    """:func:`check_input_file` for each of ``paths`` (a repeatable option)."""
    for path in paths:
        check_input_file(path, option, module_ok=module_ok)
