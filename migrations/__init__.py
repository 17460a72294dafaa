"""Alembic migration environment and revisions (installed as benchdb.migrations)."""
