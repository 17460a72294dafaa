"""Where a command writes its output (``--out``), and the one rule for every file benchdb
writes: it writes into a folder it creates, or replaces a file it can tell is its own (a
marker each writer knows: a report page's generator tag, an export's header), or asks
for ``--force``; the message names the file.  A user's own ``index.html`` or notes are
never clobbered, silently or otherwise.

Everything is checked before anything is read or written, and a file is written under a
temporary name beside its own and takes its name only when complete: a write that fails
(a full disk, a file system that refuses what ``access(2)`` allowed) or is killed leaves
nothing behind, and a file made meanwhile by someone else is not replaced."""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from .errors import UserError
from .inputs import special_kind

Marker = Callable[[Path], bool]
"""Whether an existing regular file is one benchdb wrote (and may replace without --force)."""


def never(path: Path) -> bool:
    """The marker of outputs that carry none: an existing file is replaced only with --force."""
    return False


def head_has(path: Path, needle: bytes, size: int = 8192) -> bool:
    """Whether the first ``size`` bytes of the regular file ``path`` contain ``needle``: a
    marker is near the start, and a large file of the user's is not read whole."""
    try:
        with path.open("rb") as f:
            return needle in f.read(size)
    except OSError:
        return False


def check_out_file(path: Path, *, force: bool = False, ours: Marker = never) -> Path:
    """``path`` if a file can be written there: not a folder or a special file, its folder
    there and writable, and nothing there that benchdb may not replace (see the module)."""
    kind = special_kind(path)
    if kind == "a folder":
        raise UserError(
            f"--out {path} is a folder; give a file name in it, e.g. {path / ('out' + path.suffix)}"
        )
    if kind is not None:
        raise UserError(f"--out {path} is {kind}; give the name of a regular file")
    if not path.parent.is_dir():
        raise UserError(f"folder {path.parent} does not exist; create it or choose another --out")
    if path.exists() and not os.access(path, os.W_OK):
        raise UserError(f"cannot write {path} (permission denied); choose another --out")
    _check_writable(path.parent)
    _check_replaceable(path, force, ours)
    return path


def check_out_folder(
    path: Path, files: Mapping[str, Marker] | None = None, *, force: bool = False
) -> Path:
    """``path`` if a folder can be written or created there (its nearest existing ancestor
    writable), and each of ``files`` (name: marker) it will hold can be written in it."""
    if path.exists() and not path.is_dir():
        kind = special_kind(path) or "a file"
        raise UserError(f"--out {path} is {kind}; give a folder (it is created if missing)")
    existing = next(p for p in (path, *path.parents) if p.exists())
    if not existing.is_dir():
        raise UserError(f"--out {path}: {existing} is a file; give a folder")
    _check_writable(existing)
    if path.is_dir():
        for name, ours in (files or {}).items():
            check_out_file(path / name, force=force, ours=ours)
    return path


def _check_replaceable(path: Path, force: bool, ours: Marker) -> None:
    """UserError if ``path`` exists and is neither benchdb's (``ours``) nor to be ``force``d."""
    if path.exists() and not force and not ours(path):
        raise UserError(
            f"{path} exists; choose another --out, or pass --force to replace it "
            "(benchdb did not write it)"
        )


def _check_writable(folder: Path) -> None:
    """UserError unless a file can be made in ``folder``: tried with a nameless temporary
    file, as ``access(2)`` answers yes to root and knows nothing of file systems such as
    /proc that make no files."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise UserError(
            f"cannot write in {folder} ({exc.strerror or exc}); choose another --out"
        ) from None


@contextmanager
def writing_out(path: Path, *, force: bool = False, ours: Marker = never) -> Iterator[Path]:
    """A temporary file beside ``path`` to write in, given ``path``'s name when the block
    ends without error (replacing a file there only if ``force`` or ``ours`` allows),
    removed otherwise; an OSError is one line."""
    partial = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.partial")
    try:
        partial.touch(exist_ok=False)  # as any file this user makes (umask), unlike mkstemp's 0600
        yield partial
        _publish(partial, path, force or ours(path))
    except OSError as exc:
        raise UserError(
            f"cannot write {path} ({exc.strerror or exc}); choose another --out"
        ) from None
    finally:
        partial.unlink(missing_ok=True)


def _publish(partial: Path, path: Path, replace: bool) -> None:
    """Give the finished file its name.  A hard link fails if ``path`` exists (a rename
    would replace a file made meanwhile); where the file system has no hard links, the
    check and the rename are two steps."""
    if replace:
        os.replace(partial, path)
        return
    try:
        os.link(partial, path)
    except FileExistsError:
        _check_replaceable(path, False, never)
    except OSError:
        _check_replaceable(path, False, never)
        os.replace(partial, path)
