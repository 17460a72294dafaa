"""The report page: escaped HTML built from small pieces, no template engine.

One page: a navigation column (sections, and every kernel with a dot in the
colour of its verdict) beside the content.  The only script is plotly.js,
loaded from ``plotly.min.js`` beside ``index.html`` or inlined, so the page
opens from disk with no server and no network.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from html import escape
from typing import Any

STYLE = """
:root { --nav: 15rem; --ink: #1f2933; --muted: #616e7c; --line: #d9e2ec; }
* { box-sizing: border-box; }
body { font-family: system-ui, sans-serif; margin: 0; color: var(--ink); background: #f5f7fa; }
nav { position: fixed; top: 0; bottom: 0; left: 0; width: var(--nav); overflow-y: auto;
      background: #102a43; color: #d9e2ec; padding: 1rem 0.8rem; font-size: 0.88rem; }
nav a { color: #d9e2ec; text-decoration: none; display: block; padding: 0.15rem 0.3rem;
        border-radius: 4px; }
nav a:hover { background: #243b53; }
nav .brand { font-weight: 700; font-size: 1.05rem; margin-bottom: 0.8rem; color: white; }
nav .group { margin-top: 0.9rem; color: #9fb3c8; text-transform: uppercase; font-size: 0.72rem;
             letter-spacing: 0.05em; }
main { margin-left: var(--nav); padding: 1.2rem 2rem 4rem; max-width: 110rem; }
h1 { font-size: 1.5rem; margin: 0 0 0.2rem; }
h2 { font-size: 1.2rem; margin: 2rem 0 0.6rem; padding-bottom: 0.3rem;
     border-bottom: 2px solid var(--line); }
h3 { font-size: 1.05rem; margin: 0 0 0.4rem; }
section, article { scroll-margin-top: 1rem; }
.card { background: white; border: 1px solid var(--line); border-radius: 8px;
        padding: 0.9rem 1.1rem; margin: 0.8rem 0; }
.sub, .note { color: var(--muted); }
.note { font-size: 0.9rem; }
table { border-collapse: collapse; font-size: 0.85rem; margin: 0.5rem 0; background: white; }
th, td { border: 1px solid var(--line); padding: 0.25rem 0.6rem; text-align: left;
         vertical-align: top; }
th { background: #f0f4f8; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
dl.runs { display: grid; grid-template-columns: max-content 1fr; gap: 0.3rem 1rem; margin: 0; }
dl.runs dt { font-weight: 600; }
dl.runs dd { margin: 0; }
.banner { border-radius: 8px; padding: 0.8rem 1.1rem; font-size: 1.05rem; margin: 0.8rem 0;
          border-left: 6px solid; background: white; }
.banner.slower { border-color: #c0392b; background: #fdecea; }
.banner.unchanged { border-color: #27ae60; background: #eafaf1; }
.banner.noisy { border-color: #e69f00; background: #fff8e6; }
.banner.none { border-color: #9fb3c8; }
.badge { display: inline-block; border-radius: 999px; padding: 0.05rem 0.55rem;
         font-size: 0.78rem; font-weight: 600; color: white; margin-left: 0.3rem;
         vertical-align: middle; }
.dot { display: inline-block; width: 0.6rem; height: 0.6rem; border-radius: 50%;
       margin-right: 0.4rem; background: #9fb3c8; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(30rem, 1fr));
          gap: 0.8rem; }
.chart { background: white; border: 1px solid var(--line); border-radius: 6px; min-height: 200px;
         min-width: 0; overflow: hidden; }
.chart.wide { grid-column: 1 / -1; }
details { margin: 0.5rem 0; }
summary { cursor: pointer; color: #334e68; font-weight: 600; }
tr.slower td:last-child { color: #c0392b; font-weight: 600; }
tr.faster td:last-child { color: #27ae60; font-weight: 600; }
tr.noisy td:last-child { color: #b07800; }
"""


Column = tuple[str, str, Callable[[Any], str] | None]


def anchor(kind: str, name: str) -> str:
    """An element id safe in HTML and URLs, e.g. ``k-stream.triad``."""
    return f"{kind}-{re.sub(r'[^A-Za-z0-9._-]', '_', name)}"


def table(
    rows: Sequence[Mapping[str, Any]],
    columns: Iterable[Column],
    *,
    row_class: str | None = None,
    numeric: Iterable[str] = (),
) -> str:
    """An HTML table; ``row_class`` names a field whose value becomes the row's CSS class,
    ``numeric`` the fields aligned right.  A formatter returning markup wraps it in
    :class:`Markup`."""
    cols, right = list(columns), set(numeric)
    head = "".join(f"<th>{escape(h)}</th>" for _, h, _ in cols)
    body = []
    for row in rows:
        cells = []
        for key, _, fmt in cols:
            value = row.get(key)
            text = "-" if value is None else (fmt or str)(value)
            cls = ' class="num"' if key in right else ""
            cells.append(f"<td{cls}>{text if isinstance(text, Markup) else escape(text)}</td>")
        cls = f' class="{escape(str(row[row_class]))}"' if row_class else ""
        body.append(f"<tr{cls}>{''.join(cells)}</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


class Markup(str):
    """Text that is already HTML (escaped where it had to be)."""


def link(text: str, target: str) -> Markup:
    return Markup(f'<a href="#{escape(target)}">{escape(text)}</a>')


def badge(text: str, colour: str) -> str:
    return f'<span class="badge" style="background:{escape(colour)}">{escape(text)}</span>'


def dot(colour: str | None) -> str:
    style = f' style="background:{escape(colour)}"' if colour else ""
    return f'<span class="dot"{style}></span>'


def nav(sections: Sequence[tuple[str, str]], kernels: Sequence[tuple[str, str, str | None]]) -> str:
    """The navigation column: ``sections`` (id, title), then ``kernels`` (id, name, colour)."""
    items = ['<div class="brand">benchdb report</div>']
    items += [f'<a href="#{escape(i)}">{escape(t)}</a>' for i, t in sections]
    if kernels:
        items.append('<div class="group">Kernels</div>')
        items += [f'<a href="#{escape(i)}">{dot(c)}{escape(n)}</a>' for i, n, c in kernels]
    return f"<nav>{''.join(items)}</nav>"


GENERATOR = "<meta name='generator' content='benchdb report'>"
"""The page's marker, near its start: a later report may replace a page that carries it
(:mod:`benchdb.outputs`); any other ``index.html`` is the user's."""


def page(title: str, subtitle: str, navigation: str, sections: Iterable[str], script: str) -> str:
    """The whole page; ``script`` is the ``<script>`` element that loads plotly.js."""
    return (
        f"<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>{GENERATOR}"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{escape(title)}</title><style>{STYLE}</style>{script}</head><body>"
        f"{navigation}<main><h1>{escape(title)}</h1><p class='sub'>{escape(subtitle)}</p>"
        f"{''.join(sections)}</main></body></html>\n"
    )


def section(anchor_id: str, heading: str, *parts: str) -> str:
    return f"<section id='{escape(anchor_id)}'><h2>{escape(heading)}</h2>{''.join(parts)}</section>"


def article(anchor_id: str, heading: str, *parts: str) -> str:
    return f"<article id='{escape(anchor_id)}' class='card'>{heading}{''.join(parts)}</article>"


def para(text: str, cls: str | None = None) -> str:
    return f"<p{f' class={chr(34)}{cls}{chr(34)}' if cls else ''}>{escape(text)}</p>"


def details(summary: str, *parts: str) -> str:
    return f"<details><summary>{escape(summary)}</summary>{''.join(parts)}</details>"


def definitions(items: Sequence[tuple[str, str]]) -> str:
    """A two-column list of (term, text)."""
    body = "".join(f"<dt>{escape(t)}</dt><dd>{escape(d)}</dd>" for t, d in items)
    return f"<dl class='runs'>{body}</dl>"


def banner(text: str, cls: str) -> str:
    return f"<div class='banner {escape(cls)}'>{escape(text)}</div>"
