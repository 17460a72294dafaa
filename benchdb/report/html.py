"""The report page: escaped HTML built from small pieces, no template engine.

Images are either files beside ``index.html`` (``<img src="img/x.png">``)
or inlined as ``data:`` URIs so the page is a single file.  No script, no
external resource: it opens from disk in any browser with no server.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterable, Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

MIME = {"png": "image/png", "svg": "image/svg+xml"}

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 72em; color: #222; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; margin-top: 2em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.8em 0; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: left; }
th { background: #f4f4f4; }
.slower { color: #c0392b; font-weight: bold; } .faster { color: #27ae60; }
.noisy { color: #b07800; } .note { color: #666; }
figure { display: inline-block; margin: 0.5em; vertical-align: top; }
img { max-width: 100%; }
"""


def table(
    rows: Sequence[Mapping[str, Any]],
    columns: Iterable[tuple[str, str, Callable[[Any], str] | None]],
    *,
    row_class: str | None = None,
) -> str:
    """An HTML table; ``row_class`` names a field whose value becomes the row's CSS class."""
    cols = list(columns)
    head = "".join(f"<th>{escape(h)}</th>" for _, h, _ in cols)
    body = []
    for row in rows:
        cells = "".join(
            f"<td>{escape((fmt or str)(row[k]) if row.get(k) is not None else '-')}</td>"
            for k, _, fmt in cols
        )
        cls = f' class="{escape(str(row[row_class]))}"' if row_class else ""
        body.append(f"<tr{cls}>{cells}</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def image(path: Path, root: Path, alt: str, *, inline: bool) -> str:
    """A figure's ``<img>``: a path relative to ``root``, or the file inlined."""
    if inline:
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        src = f"data:{MIME[path.suffix[1:]]};base64,{data}"
    else:
        src = path.relative_to(root).as_posix()
    return f'<figure><img src="{escape(src)}" alt="{escape(alt)}"></figure>'


def page(title: str, sections: Iterable[str]) -> str:
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>"
        f"<h1>{escape(title)}</h1>{''.join(sections)}</body></html>\n"
    )


def section(heading: str, *parts: str) -> str:
    return f"<section><h2>{escape(heading)}</h2>{''.join(parts)}</section>"


def para(text: str, cls: str | None = None) -> str:
    return f"<p{f' class={chr(34)}{cls}{chr(34)}' if cls else ''}>{escape(text)}</p>"
