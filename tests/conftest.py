"""Shared fixtures.

``db_url`` runs a test on the embedded SQLite *and* on the real PostgreSQL
server named by ``BENCHDB_TEST_POSTGRES`` (default: the local server on
127.0.0.1:5432, database ``test``).  Each PostgreSQL test gets a schema of its
own (``search_path`` set in the URL) that is dropped afterwards.  Where no
server answers, the PostgreSQL half is skipped with the reason -- unless
``BENCHDB_REQUIRE_POSTGRES=1`` (CI), where it fails instead.

The suite runs on several workers (pytest-xdist, ``scripts/test.sh``).  A test marked
``alone`` judges timings, which another test's load beside it would decide: it runs
with no other test beside it (:mod:`tests.alone`).
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError

from benchdb.db.engine import Database, open_database
from tests.alone import pytest_runtest_protocol  # noqa: F401  (the hook)
from tests.needs import missing

PG_DEFAULT = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


def postgres_base_url() -> str:
    return os.environ.get("BENCHDB_TEST_POSTGRES", PG_DEFAULT)


def _postgres_unavailable_reason() -> str | None:
    try:
        eng = create_engine(postgres_base_url(), connect_args={"connect_timeout": 3})
        with eng.connect() as conn:
            conn.execute(text("SELECT 1"))
        eng.dispose()
    except OperationalError as exc:
        return f"no PostgreSQL at {postgres_base_url()} ({str(exc.orig).splitlines()[0]})"
    return None


_PG_REASON: str | bool | None = False  # False: not probed yet


def _require_postgres() -> None:
    global _PG_REASON
    if _PG_REASON is False:
        _PG_REASON = _postgres_unavailable_reason()
    if _PG_REASON:
        missing(str(_PG_REASON), "BENCHDB_REQUIRE_POSTGRES")


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A URL whose ``search_path`` is a fresh, empty schema on the real server."""
    _require_postgres()
    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = create_engine(postgres_base_url())
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    sep = "&" if "?" in postgres_base_url() else "?"
    yield f"{postgres_base_url()}{sep}options={quote(f'-csearch_path={schema}')}"
    with admin.begin() as conn:
        conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
    admin.dispose()


@pytest.fixture
def secret() -> str:
    """A database password no other text holds by chance, to look for where it must not be."""
    return f"pw-{secrets.token_hex(8)}"


@pytest.fixture
def secret_url(postgres_url: str, secret: str) -> str:
    """``postgres_url`` with ``secret`` as its password: a server that trusts local
    connections (the test server) takes any, so only where it goes can be tested."""
    url = make_url(postgres_url).set(password=secret).render_as_string(hide_password=False)
    engine = create_engine(url)
    try:
        engine.connect().close()
    except OperationalError as exc:
        reason = str(exc.orig).splitlines()[0]
        missing(f"PostgreSQL refuses an arbitrary password (needs trust auth): {reason}",
                "BENCHDB_REQUIRE_POSTGRES")  # fmt: skip
    finally:
        engine.dispose()
    return url


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request: pytest.FixtureRequest, tmp_path) -> str:
    """A URL to an empty database: SQLite file, or a PostgreSQL schema."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'bench.sqlite'}"
    return request.getfixturevalue("postgres_url")


@pytest.fixture
def db(db_url: str) -> Iterator[Database]:
    """An open database at the code's schema head."""
    database = open_database(db_url)
    yield database
    database.close()


@pytest.fixture
def sqlite_url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'bench.sqlite'}"


EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.fixture(scope="session")
def mpi_example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """examples/shallow_mpi built with ``make`` (the MPICH wheel's mpicc) in a temporary
    copy of its folder; its path.  Skipped without mpicc and mpiexec, except under
    ``BENCHDB_REQUIRE_MPI=1`` (tests/needs.py)."""
    from benchdb.kernels.program import tools_env

    path = tools_env()["PATH"]
    absent = [t for t in ("mpicc", "mpiexec", "make") if shutil.which(t, path=path) is None]
    if absent:
        missing(f"{' and '.join(absent)} not found: cannot build examples/shallow_mpi",
                "BENCHDB_REQUIRE_MPI")  # fmt: skip
    folder = tmp_path_factory.mktemp("example") / "shallow_mpi"
    shutil.copytree(
        EXAMPLES / "shallow_mpi", folder, ignore=shutil.ignore_patterns("shallow_mpi", "*.o")
    )
    done = subprocess.run(
        ["make"], cwd=folder, capture_output=True, text=True, timeout=300, env=tools_env()
    )
    if done.returncode != 0:
        pytest.fail(f"make failed in {folder}:\n{done.stdout}{done.stderr}")
    return folder
