"""Alembic environment: runs on the engine that benchdb hands over.

``benchdb.db.migrate.alembic_config`` puts the engine in
``config.attributes['engine']``; batch mode makes ALTERs work on SQLite.

Batch mode alters an SQLite table by recreating it (copy, drop, rename).  With
foreign keys enforced, dropping a table that other rows refer to fails
(``run.machine_id`` -> ``machine``), or worse, deletes the rows that refer to
it with ``ON DELETE CASCADE``.  So, as SQLite's own procedure for altering a
table prescribes, enforcement is off while the migrations run (it can only be
switched outside a transaction), ``PRAGMA foreign_key_check`` must find no
broken reference before the commit, and enforcement is back on afterwards.

Many processes may open one new database at once (every node of a batch job
starting ``benchdb collect``).  Each must find the schema either absent or
complete, never half made, so the migrations run one process at a time and
all in one transaction.  alembic commits after each migration on a backend it
takes for non-transactional (SQLite among them), which released the lock
between revisions and let a waiting process, holding the revision it had read
before, run one again ("table baseline_change already exists"); SQLite does run
DDL inside a transaction, so ``transactional_ddl`` is set and there is one
commit at the end.  On SQLite that transaction begins ``IMMEDIATE`` (benchdb's
writing engine); on PostgreSQL it first takes a transaction-level advisory lock
on the schema (:func:`_serialize`).  alembic reads the stamped revision only
after that, inside the same transaction, so a process that waited finds the
schema at head and has nothing to do.
"""

import hashlib

from alembic import context
from sqlalchemy import Connection, create_engine, text

from benchdb.db.models import Base

config = context.config
target_metadata = Base.metadata


def _sqlite_foreign_keys(connection: Connection, on: bool) -> None:
    """Switch enforcement on the driver's connection, outside any transaction."""
    connection.connection.driver_connection.execute(  # type: ignore[union-attr]
        f"PRAGMA foreign_keys = {'ON' if on else 'OFF'}"
    )


def _check_foreign_keys(connection: Connection) -> None:
    broken = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
    if broken:
        raise RuntimeError(f"a migration left broken foreign keys: {broken[:5]}")


def _serialize(connection: Connection) -> None:
    """PostgreSQL: wait for any other process migrating this schema, until our commit."""
    schema = connection.execute(text("SELECT current_database() || '.' || current_schema()"))
    digest = hashlib.sha256(f"benchdb migrations {schema.scalar()}".encode()).digest()
    key = int.from_bytes(digest[:8], "big", signed=True)
    connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": key})


def run_migrations_online() -> None:
    engine = config.attributes.get("engine")
    if engine is None:
        engine = create_engine(config.get_main_option("sqlalchemy.url"))
    with engine.connect() as connection:
        sqlite = connection.dialect.name == "sqlite"
        if sqlite:
            _sqlite_foreign_keys(connection, on=False)
        try:
            context.configure(
                connection=connection,
                target_metadata=target_metadata,
                render_as_batch=sqlite,
                transactional_ddl=True,
            )
            with context.begin_transaction():
                if connection.dialect.name == "postgresql":
                    _serialize(connection)
                context.run_migrations()
                if sqlite:
                    _check_foreign_keys(connection)
            connection.commit()
        finally:
            if sqlite:
                connection.rollback()
                _sqlite_foreign_keys(connection, on=True)


run_migrations_online()
