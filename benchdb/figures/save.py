"""Writing a figure: the formats benchdb writes, and the one save helper."""

from __future__ import annotations

from pathlib import Path

from matplotlib.figure import Figure

from ..errors import UserError
from ..outputs import check_out_file, writing_out

FORMATS = (".png", ".svg")
DPI = 120


def check_output(path: Path) -> Path:
    """``path`` if its suffix is a supported format and it can be written."""
    if path.suffix.lower() not in FORMATS:
        raise UserError(f"output {path} must end in {' or '.join(FORMATS)}")
    return check_out_file(path)


def save(fig: Figure, path: Path) -> Path:
    """Lay ``fig`` out and write it to ``path`` (the format from the suffix)."""
    fig.tight_layout()
    with writing_out(path):
        fig.savefig(path, dpi=DPI)
    return path
