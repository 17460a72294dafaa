"""Alembic environment: runs on the engine that benchdb hands over.

``benchdb.db.migrate.alembic_config`` puts the engine in
``config.attributes['engine']``; batch mode makes ALTERs work on SQLite.
"""

from alembic import context
from sqlalchemy import create_engine

from benchdb.db.models import Base

config = context.config
target_metadata = Base.metadata


def run_migrations_online() -> None:
    engine = config.attributes.get("engine")
    if engine is None:
        engine = create_engine(config.get_main_option("sqlalchemy.url"))
    with engine.connect() as connection:
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            render_as_batch=connection.dialect.name == "sqlite",
        )
        with context.begin_transaction():
            context.run_migrations()
        connection.commit()


run_migrations_online()
