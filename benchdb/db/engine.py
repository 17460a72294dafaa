"""Choosing, opening and checking the results database.

URL precedence (docs/design.md "Conventions"): ``--db``, else ``BENCHDB_URL``, else
an embedded SQLite file in the user's data directory.

SQLite runs in WAL mode with a busy timeout.  Transactions that may write
(:meth:`Database.session`, migrations) begin ``IMMEDIATE``, so several processes (two
collectors, a collector and ``predict`` storing a fit) write the same file at
once: writers queue on the lock instead of failing on a read-to-write upgrade.
Everything else (:meth:`Database.reading`, opening and checking a database)
begins deferred and reads its WAL snapshot beside a writer, without waiting.
``synchronous = FULL``: each committed pass of a point survives an OS crash or
power loss, not only a crash of the process; it costs one fsync per commit,
small against the time a point takes to measure (docs/findings/sqlite.md).

A database file that this process may not write (a read-only copy, shared
media) is opened read-only (``mode=ro``, and ``immutable`` where no writer's WAL
is beside it or not even its folder is writable): every read command works on
it, nothing is stored there, and a command that stores refuses it.  Before any
driver opens a file it is checked to be a benchdb database, read the same way,
so that another application's file is never switched to WAL, and no FIFO, device or
folder is opened as one.  An in-memory database is refused: it holds nothing to read and
keeps nothing a command stores once the command ends.

Damage SQLite finds in a page is a :class:`UserError` naming the database that holds
it (:func:`damage_in`): a command may open two (``import`` reads one and writes another).
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from platformdirs import user_data_path
from sqlalchemy import Engine, create_engine, event, inspect, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from ..errors import NoDatabase, UserError
from ..inputs import special_kind
from .urls import URL_VAR, redact

SQLITE_BUSY_TIMEOUT_S = 60.0


def default_url() -> str:
    """The embedded default: ``<user data dir>/benchdb.sqlite``."""
    return f"sqlite:///{user_data_path('benchdb') / 'benchdb.sqlite'}"


SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db")


def resolve_url(url: str | None = None) -> str:
    """``url``, else ``$BENCHDB_URL``, else the embedded default; a value without a
    scheme that names an SQLite file (``results.sqlite``, ``~/bench/db.db``) is that file."""
    given = url or os.environ.get(URL_VAR)
    if not given:
        return default_url()
    if "://" in given:
        return given
    if Path(given).suffix.lower() in SQLITE_SUFFIXES:
        return f"sqlite:///{Path(given).expanduser().resolve()}"
    raise UserError(
        f"database {redact(given)!r} is neither a URL nor an SQLite file (.sqlite, .sqlite3, "
        ".db); use e.g. sqlite:///path/benchdb.sqlite or postgresql+psycopg://user@host/dbname"
    )


SQLITE_HEADER = b"SQLite format 3\x00"


def _sqlite_tables(path: Path) -> set[str] | None:
    """The tables of the SQLite file at ``path``, read without changing it (no journal
    mode set, no page written); None when the file is not there; UserError when it is no
    regular file (:func:`_is_file`), no SQLite database or a damaged one: its header, or
    the first page of a benchdb table (read past any index), so that a command refuses
    it before it works, not once a query reaches the page.

    SQLite itself reads the file: a plain ``open`` and ``close`` of a file this process
    holds an SQLite connection to drops that connection's POSIX locks, and another
    process's writer then checkpoints and deletes a ``-wal`` still in use, which damages
    the database (sqlite.org/howtocorrupt.html, section 2.2).  SQLite's own handle defers
    that ``close``."""
    if not _is_file(path):  # not there: created, or refused later
        return None
    try:
        conn = sqlite3.connect(_read_only_uri(path), uri=True)
        try:
            rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
            tables = {name for (name,) in rows}
            if "alembic_version" in tables:  # benchdb's: plain tables, no module needed to read
                for name in tables:  # each root page: damage there shows now, not mid-command
                    conn.execute(f'SELECT 1 FROM "{name}" NOT INDEXED LIMIT 1').fetchall()
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise _unreadable(path, exc) from None
    return tables


def _is_file(path: Path) -> bool:
    """Whether a file is at ``path`` (False: nothing is); a database path that is there
    but no regular file is refused before SQLite opens it: opening a FIFO waits for a
    writer forever, a device such as /dev/null reads as an empty database and takes a
    ``-journal`` beside it, a folder is no file to open.  ``os.stat`` opens nothing, so
    it neither blocks nor drops another handle's locks."""
    kind = special_kind(path)
    if kind is not None:
        fix = (
            f"name a file in it, e.g. {path / 'benchdb.sqlite'}"
            if kind == "a folder"
            else "give the path of an SQLite file, or of a new one"
        )
        raise UserError(f"database {path} is {kind}, not a file; {fix}")
    return path.exists()


def _unreadable(path: Path, exc: sqlite3.DatabaseError) -> UserError:
    """Why SQLite could not read ``path``: not readable, no SQLite file, or damaged.  Its
    header is read only now, once SQLite failed on it, so no connection holds it."""
    try:
        with path.open("rb") as f:
            head = f.read(len(SQLITE_HEADER))
    except OSError as err:
        return UserError(
            f"cannot read database file {path} ({err.strerror}); check --db / BENCHDB_URL"
        )
    if head and head != SQLITE_HEADER:
        return UserError(
            f"{path} is not an SQLite database (it does not start with the SQLite header); "
            "check --db / BENCHDB_URL, or give a new file"
        )
    return _damaged(str(path), exc)


def _damaged(name: str, exc: BaseException) -> UserError:
    return UserError(
        f"database {name} is damaged ({exc}); restore it from a copy, or give another file"
    )


def check_sqlite_target(path: Path, *, create: bool, write: bool) -> None:
    """Refuse, before any driver opens it, a path that is no benchdb database: no regular
    file, not SQLite, damaged, another application's, or (for a command that only reads) empty
    or not there; and, for a command that writes, a database it cannot write."""
    tables = _sqlite_tables(path)
    if tables is None:
        if not create:
            raise NoDatabase(
                f"no database at {path}; check --db / BENCHDB_URL, or create one with "
                "`benchdb collect`"
            )
        return
    if tables and "alembic_version" not in tables:
        listed = ", ".join(sorted(tables)[:3]) + (", ..." if len(tables) > 3 else "")
        raise UserError(
            f"{path} is an SQLite database of another application (tables {listed}), not "
            "benchdb's; check --db / BENCHDB_URL, or give a new file"
        )
    if not tables and not create:
        raise UserError(
            f"database {path} holds no benchdb data (no schema); check --db / BENCHDB_URL, "
            "or collect into it first with `benchdb collect`"
        )
    if write and _read_only(path):
        raise UserError(
            f"database {path} is read-only here (the file or its folder {path.parent}); "
            f"make both writable (chmod u+w) or copy the file to a writable place and pass "
            "that with --db"
        )


def _parse(url: str) -> URL:
    try:
        return make_url(url)
    except ArgumentError as exc:
        raise UserError(
            f"cannot parse database URL {url!r}; use e.g. sqlite:///path/benchdb.sqlite "
            "or postgresql+psycopg://user@host/dbname"
        ) from exc


def _in_memory(url: str) -> bool:
    """An SQLite URL of a database in memory: ``sqlite://``, ``sqlite:///:memory:``, a
    ``file::memory:`` or ``mode=memory`` URI."""
    u = _parse(url)
    name = u.database or ""
    return u.get_backend_name() == "sqlite" and (
        name in ("", ":memory:")
        or name.startswith("file::memory:")
        or "mode=memory" in name
        or u.query.get("mode") == "memory"
    )


def _sqlite_path(url: str) -> Path | None:
    u = _parse(url)
    if u.get_backend_name() != "sqlite" or _in_memory(url):
        return None
    return Path(u.database).expanduser()  # type: ignore[arg-type]


def _prepare_sqlite_file(path: Path) -> None:
    """Create the parent folder; refuse an unwritable location up front."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(
            f"cannot create folder {path.parent} for the database ({exc.strerror}); "
            "pass a writable location with --db sqlite:///PATH or set BENCHDB_URL"
        ) from exc
    target = path if path.exists() else path.parent
    if not os.access(target, os.W_OK):
        raise UserError(
            f"database location {target} is not writable; "
            "pass a writable location with --db sqlite:///PATH or set BENCHDB_URL"
        )


def _set_wal(cur: sqlite3.Cursor) -> None:
    """``PRAGMA journal_mode = WAL``, retried while another process converts the file.

    Switching a new file to WAL takes an exclusive lock, and SQLite answers
    "database is locked" at once instead of calling the busy handler when
    another connection is doing the same (two collectors opening one new
    database); the mode persists in the file, so a retry finds it done.
    """
    deadline = time.monotonic() + SQLITE_BUSY_TIMEOUT_S
    while True:
        try:
            cur.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


WRITING = "benchdb_writing"  # execution option of the transactions that may write


def _configure_sqlite(engine: Engine, read_only: bool) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn, _record) -> None:  # type: ignore[no-untyped-def]
        dbapi_conn.isolation_level = None  # we emit BEGIN ourselves, below
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout = {int(SQLITE_BUSY_TIMEOUT_S * 1000)}")
        if not read_only:
            _set_wal(cur)
            cur.execute("PRAGMA synchronous = FULL")
        cur.execute("PRAGMA foreign_keys = ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn) -> None:  # type: ignore[no-untyped-def]
        writing = not read_only and conn.get_execution_options().get(WRITING, False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if writing else "BEGIN")


def _read_only(path: Path) -> bool:
    """An existing SQLite file this process may not write (or whose folder it may not)."""
    return path.exists() and not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK))


def _read_only_uri(path: Path) -> str:
    """An SQLite URI that opens ``path`` read-only and creates nothing beside it.

    Without a ``-wal`` file every page is in the file itself, which is then read as
    ``immutable`` (no ``-wal`` or ``-shm`` created); so it is where the folder is not
    writable, as SQLite then cannot keep its WAL index.  With one, a writer may be
    at work: its pages are read through the WAL.
    """
    wal = path.with_name(path.name + "-wal").exists()
    immutable = not wal or not os.access(path.parent, os.W_OK)
    return f"file:{quote(str(path.resolve()))}?mode=ro{'&immutable=1' if immutable else ''}"


def make_engine(url: str) -> Engine:
    """An engine for ``url``, with SQLite tuned for concurrent writers; damage SQLite
    finds in a page is a UserError naming ``url``."""
    parsed = _parse(url)
    backend = parsed.get_backend_name()
    if backend == "postgresql" and parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")
    path = _sqlite_path(url)
    read_only = path is not None and _read_only(path)
    if read_only:
        parsed = make_url(f"sqlite:///{_read_only_uri(path)}&uri=true")  # type: ignore[arg-type]
    elif path is not None:
        _prepare_sqlite_file(path)
    kwargs: dict = {}
    if backend == "sqlite":
        kwargs["connect_args"] = {"timeout": SQLITE_BUSY_TIMEOUT_S}
    elif backend == "postgresql":
        kwargs["connect_args"] = {"connect_timeout": 5}
        kwargs["pool_pre_ping"] = True
    try:
        engine = create_engine(parsed, **kwargs)
    except (ArgumentError, ImportError) as exc:
        raise UserError(
            f"unsupported database URL {redact(url)} ({exc}); "
            "use sqlite:///PATH or postgresql+psycopg://user@host/dbname"
        ) from exc
    if backend == "sqlite":
        _configure_sqlite(engine, read_only)
        _name_damage(engine, url)
    return engine


def _name_damage(engine: Engine, url: str) -> None:
    """Damage that SQLite finds while ``engine`` works (a page read only when a query
    reaches it) is raised as one line naming ``url``, where it is found: the CLI's last
    resort (:func:`damage_found`) cannot tell which of two databases it was in."""
    _opened_sqlite[id(engine)] = redact(url)

    @event.listens_for(engine, "handle_error")
    def _on_error(context) -> None:  # type: ignore[no-untyped-def]
        damage = damage_in(context.original_exception, redact(url))
        if damage is not None:
            raise damage from context.original_exception


def writing(engine: Engine) -> Engine:
    """``engine`` for transactions that may write: on SQLite they begin ``IMMEDIATE``."""
    return engine.execution_options(**{WRITING: True})


def is_read_only(engine: Engine) -> bool:
    """Whether ``engine`` was opened read-only (:func:`make_engine`)."""
    return "mode=ro" in str(engine.url)


@dataclass
class Database:
    """An open, schema-checked database: the engine and a session factory."""

    url: str
    engine: Engine

    def __post_init__(self) -> None:
        self._sessions = sessionmaker(writing(self.engine), expire_on_commit=False)
        self._readers = sessionmaker(self.engine, expire_on_commit=False)

    @property
    def read_only(self) -> bool:
        """Opened read-only: reads work, nothing can be stored (no cached fits either)."""
        return is_read_only(self.engine)

    @property
    def display_url(self) -> str:
        return redact(self.url)

    @property
    def backend(self) -> str:
        return self.engine.dialect.name

    @contextmanager
    def session(self) -> Iterator[Session]:
        """One transaction that may write: committed on success, rolled back on any error."""
        with self._sessions() as session, session.begin():
            yield session

    @contextmanager
    def reading(self) -> Iterator[Session]:
        """One transaction that only reads: it neither waits for a writer nor blocks one."""
        with self._readers() as session, session.begin():
            yield session

    def close(self) -> None:
        _opened_sqlite.pop(id(self.engine), None)
        self.engine.dispose()


def check_reachable(engine: Engine, url: str) -> None:
    """Connect once, turning a driver error into a one-line fix."""
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except OperationalError as exc:
        reason = str(exc.orig).strip().splitlines()[0] if exc.orig else str(exc)
        if engine.dialect.name == "sqlite":
            raise UserError(
                f"cannot open SQLite database {redact(url)}: {reason}; "
                "pass a writable file with --db sqlite:///PATH or set BENCHDB_URL"
            ) from exc
        raise UserError(
            f"cannot reach database {redact(url)}: {reason}; "
            "check the server is running and the URL (--db or BENCHDB_URL) is right"
        ) from exc


_DAMAGE = ("malformed", "not a database")  # what SQLite says of a damaged file
_opened_sqlite: dict[int, str] = {}  # the SQLite engines open in this process: their URLs


def damage_in(exc: BaseException, name: str) -> UserError | None:
    """The one-line error naming database ``name`` where ``exc`` (or its cause) is SQLite
    finding a damaged page (each table's first page is checked on opening, a page deeper
    in only when a query reaches it)."""
    cause: BaseException | None = exc
    seen: set[int] = set()
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, sqlite3.DatabaseError) and any(d in str(cause) for d in _DAMAGE):
            return _damaged(name, cause)
        cause = getattr(cause, "orig", None) or cause.__cause__ or cause.__context__
    return None


def damage_found(exc: BaseException) -> UserError | None:
    """:func:`damage_in` for damage that reached the CLI past the engines (a raw DBAPI
    connection, as ``db compact`` uses): it names the SQLite databases open in this
    process, as the error carries no URL."""
    return damage_in(exc, " or ".join(dict.fromkeys(_opened_sqlite.values())) or "file")


def stamped_revision(engine: Engine) -> str | None:
    """The alembic revision the database is stamped with, read with plain SQL."""
    with engine.connect() as conn:
        if not inspect(conn).has_table("alembic_version"):
            return None
        return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()


def check_target(url: str, *, create: bool, write: bool) -> None:
    """:func:`check_sqlite_target` for an SQLite URL (a server checks its own).

    An in-memory database is refused whatever the command: one that stores would keep
    nothing once it ends (``collect`` would measure for minutes and discard it all), and
    one that reads would find nothing in it.  ``create=True, write=False`` is what every
    command refuses, the CLI checks it as it parses ``--db``, before any work
    (:data:`~benchdb.cli.common.DbOption`)."""
    if _in_memory(url):
        raise UserError(
            f"database {url} is in memory: it holds nothing, and nothing stored there "
            "outlives the command; give an SQLite file, e.g. sqlite:///benchdb.sqlite"
        )
    path = _sqlite_path(url)
    if path is not None:
        check_sqlite_target(path, create=create, write=write)


def open_database(
    url: str | None = None, *, upgrade: bool = True, create: bool = True, write: bool = False
) -> Database:
    """Open the database named by ``url`` (or the default) and check its schema.

    A database behind the code is upgraded (``upgrade=True``) or refused; one
    stamped with a revision this code does not know (newer code wrote it) is
    always refused.  Nothing is written when it is refused.  A database already
    at :data:`~.models.SCHEMA_HEAD` is opened without importing alembic.
    ``create=False`` (the commands that only read) refuses a database that does
    not exist or holds no benchdb schema, and creates nothing.  ``write`` (implied by
    ``create``) refuses a database this process may not write, where a reader would
    open it read-only.  A file that is no benchdb database (or no regular file, or
    damaged) and an in-memory URL are refused either way, before anything opens it.
    """
    from .models import SCHEMA_HEAD

    resolved = resolve_url(url)
    check_target(resolved, create=create, write=write or create)
    engine = make_engine(resolved)
    check_reachable(engine, resolved)
    stamped = stamped_revision(engine)
    if is_read_only(engine) and stamped != SCHEMA_HEAD:
        engine.dispose()
        raise UserError(
            f"database {redact(resolved)} is read-only here and at schema revision "
            f"{stamped or 'none'}, not this benchdb's {SCHEMA_HEAD}; upgrade a writable copy "
            "with `benchdb db upgrade`"
        )
    if stamped is None and not create:
        engine.dispose()
        raise UserError(
            f"database {redact(resolved)} holds no benchdb data (no schema); check --db / "
            "BENCHDB_URL, or collect into it first with `benchdb collect`"
        )
    if stamped != SCHEMA_HEAD:
        from .migrate import ensure_schema

        ensure_schema(writing(engine), resolved, upgrade=upgrade)
    return Database(resolved, engine)
