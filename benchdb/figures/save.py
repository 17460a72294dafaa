"""Writing a figure: the formats benchdb writes, and the one save helper."""

from __future__ import annotations

from pathlib import Path

from matplotlib.figure import Figure

from ..errors import UserError

FORMATS = (".png", ".svg")
DPI = 120


def check_output(path: Path) -> Path:
    """``path`` if its suffix is a supported format and its folder exists."""
    if path.suffix.lower() not in FORMATS:
        raise UserError(f"output {path} must end in {' or '.join(FORMATS)}")
    if not path.parent.exists():
        raise UserError(f"folder {path.parent} does not exist; create it or choose another --out")
    return path


def save(fig: Figure, path: Path) -> Path:
    """Lay ``fig`` out and write it to ``path`` (the format from the suffix)."""
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    return path
