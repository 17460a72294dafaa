"""Database URLs as users see them: passwords never printed.

Its own module so that the engine and the migrations, which both name databases in
their messages, depend on it rather than on each other.
"""

from __future__ import annotations

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError


def redact(url: str) -> str:
    """The URL with any password masked: passwords are never printed."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "<unparseable URL>"
