"""Writing a figure: the formats benchdb writes, and the one save helper.

Each figure carries a marker in its metadata (PNG ``Software``, SVG ``dc:creator``), by
which a later ``--out`` of the same name replaces it without ``--force``
(:mod:`benchdb.outputs`)."""

from __future__ import annotations

from pathlib import Path

from matplotlib.figure import Figure

from ..errors import UserError
from ..outputs import check_out_file, head_has, writing_out

FORMATS = (".png", ".svg")
DPI = 120
CREATOR = "benchdb"
_PNG_TEXT = b"Software\x00" + CREATOR.encode()
_MARKERS = {
    ".png": len(_PNG_TEXT).to_bytes(4, "big") + b"tEXt" + _PNG_TEXT,  # the whole tEXt chunk
    ".svg": b"<dc:title>" + CREATOR.encode() + b"</dc:title>",
}


def is_figure(path: Path) -> bool:
    """Whether ``path`` is a figure benchdb saved (its metadata names benchdb)."""
    marker = _MARKERS.get(path.suffix.lower())
    return marker is not None and head_has(path, marker, 2048)


def check_output(path: Path, force: bool = False) -> Path:
    """``path`` if its suffix is a supported format and it can be written."""
    if path.suffix.lower() not in FORMATS:
        raise UserError(f"output {path} must end in {' or '.join(FORMATS)}")
    return check_out_file(path, force=force, ours=is_figure)


def save(fig: Figure, path: Path, force: bool = False) -> Path:
    """Lay ``fig`` out and write it to ``path`` (the format from the suffix)."""
    fig.tight_layout()
    fmt = path.suffix.lower().lstrip(".")
    key = "Software" if fmt == "png" else "Creator"
    with writing_out(path, force=force, ours=is_figure) as partial:
        fig.savefig(partial, format=fmt, dpi=DPI, metadata={key: CREATOR})
    return path
