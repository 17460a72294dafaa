"""Where a command writes its output (``--out``): checked before anything is read or
written, and a write that fails anyway (a full disk, a file system that refuses what
``access(2)`` allowed) is one line with nothing left behind."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import UserError


def check_out_file(path: Path) -> Path:
    """``path`` if a file can be written there: not a folder, its folder there and writable."""
    if path.is_dir():
        raise UserError(
            f"--out {path} is a folder; give a file name in it, e.g. {path / ('out' + path.suffix)}"
        )
    if not path.parent.is_dir():
        raise UserError(f"folder {path.parent} does not exist; create it or choose another --out")
    if path.exists() and not os.access(path, os.W_OK):
        raise UserError(f"cannot write {path} (permission denied); choose another --out")
    _check_writable(path.parent)
    return path


def check_out_folder(path: Path) -> Path:
    """``path`` if a folder can be written or created there (its nearest existing
    ancestor writable)."""
    if path.exists() and not path.is_dir():
        raise UserError(f"--out {path} is a file; give a folder (it is created if missing)")
    existing = next(p for p in (path, *path.parents) if p.exists())
    if not existing.is_dir():
        raise UserError(f"--out {path}: {existing} is a file; give a folder")
    _check_writable(existing)
    return path


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
def writing_out(path: Path) -> Iterator[Path]:
    """Write ``path`` inside this block; an OSError is one line, and a file the block
    created is removed."""
    existed = path.exists()
    try:
        yield path
    except OSError as exc:
        if not existed:
            path.unlink(missing_ok=True)
        raise UserError(
            f"cannot write {path} ({exc.strerror or exc}); choose another --out"
        ) from None
