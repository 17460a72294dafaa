"""Database URLs as users see them, and the one place that knows where their password is.

A password written into a URL (``postgresql+psycopg://me:secret@host/db``, or the
``password`` query parameter libpq also reads) never leaves the user's hands: it is
masked wherever a URL or a command line is printed or stored (:func:`redact`,
:func:`redact_argv`, :func:`redact_command`), and a process benchdb starts -- an MPI
rank, a Slurm job -- is given the URL without it and the password in its environment, as
``PGPASSWORD``, the way every PostgreSQL client takes one (:func:`child_environment`).
Argument vectors are readable by every user of a node (``ps``), batch scripts are kept by
the Slurm controller; a process's environment is readable only by its owner.

Its own module so that the engine and the migrations, which both name databases in
their messages, depend on it rather than on each other.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

URL_VAR = "BENCHDB_URL"
"""The environment variable naming the database when ``--db`` does not."""
PASSWORD_VAR = "PGPASSWORD"
"""Where libpq (psycopg) looks for a password the URL does not hold."""
MASK = "***"  # what SQLAlchemy prints for a hidden password, so messages look alike

_URL_START = re.compile(r"[A-Za-z][\w+.-]*://")
# user:PASSWORD@ -- up to the last "@", so that a password holding "@" or "/" (which
# SQLAlchemy accepts unescaped) is masked whole; a URL without "user:" has no password.
_USERINFO_PASSWORD = re.compile(r"^([A-Za-z][\w+.-]*://[^:@/]*:).*@", re.DOTALL)
_QUERY_PASSWORD = re.compile(r"([?&]password=)[^&]*")


def _mask(url: str) -> str:
    """``url`` with its password, in the user part or the query, replaced by ``***``; the
    rest exactly as written (it is not re-rendered: a stored command stays recognisable)."""
    masked = _USERINFO_PASSWORD.sub(rf"\g<1>{MASK}@", url, count=1)
    return _QUERY_PASSWORD.sub(rf"\g<1>{MASK}", masked)


def redact(url: str) -> str:
    """The URL with any password masked: passwords are never printed."""
    try:
        make_url(url)
    except ArgumentError:
        return "<unparseable URL>"
    return _mask(url)


def _redact_token(token: str) -> str:
    """One argument with the password of the URL in it masked, whatever precedes the URL
    (``--db=``, ``BENCHDB_URL=``)."""
    start = _URL_START.search(token)
    if start is None:
        return token
    return token[: start.start()] + _mask(token[start.start() :])


def redact_argv(argv: Sequence[str]) -> str:
    """A command line as it is stored and shown (``run.command``): the arguments joined by
    spaces, the password of every URL in any of them masked."""
    return " ".join(_redact_token(a) for a in argv)


def redact_command(command: str) -> str:
    """:func:`redact_argv` of a command line already stored as text (an import, a database
    written before redaction): each space-separated word is an argument."""
    return re.sub(r"\S+", lambda word: _redact_token(word.group()), command)


def _password(url: URL) -> str | None:
    """The URL's password: in its user part, else libpq's ``password`` query parameter."""
    if url.password is not None:
        return str(url.password)
    value = url.query.get("password")
    return value if isinstance(value, str) or value is None else value[-1]


def split_password(url: str) -> tuple[str, str | None]:
    """(the URL without its password, the password or ``None``).

    An unparseable URL is returned unchanged: it names no password benchdb could move, and
    opening it fails with its own message.
    """
    try:
        parsed = make_url(url)
    except ArgumentError:
        return url, None
    password = _password(parsed)
    if password is None:
        return url, None
    bare = URL.create(
        parsed.drivername,
        username=parsed.username,
        host=parsed.host,
        port=parsed.port,
        database=parsed.database,
        query={k: v for k, v in parsed.query.items() if k != "password"},
    )
    return bare.render_as_string(hide_password=False), password


def child_environment(
    url: str, environ: Mapping[str, str] | None = None
) -> tuple[str, dict[str, str]]:
    """(the URL to put in a child process's arguments, the environment to start it with).

    The URL is ``url`` without its password; the environment is ``environ`` (default: this
    process's) with the password in ``PGPASSWORD``, and ``BENCHDB_URL``, when set, without
    its password too -- a Slurm job gets the whole submitting environment, and its
    ``BENCHDB_URL`` has no business holding a password the job is given otherwise.
    """
    env = dict(os.environ if environ is None else environ)
    bare, password = split_password(url)
    if URL_VAR in env:
        env[URL_VAR] = split_password(env[URL_VAR])[0]
    if password is not None:
        env[PASSWORD_VAR] = password
    return bare, env
