"""an index on a run's host and start time

``latest``, ``previous``, a baseline's runs and a kernel's newest point read a node
class's runs newest first, host by host (:mod:`benchdb.db.newest`).  With only
``ix_run_machine_id`` and ``ix_run_started_at`` the database either sorts every run of
the host or walks the whole history by time; ``ix_run_machine_started`` on
``(machine_id, started_at, id)`` hands it one host's runs in order.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-07 21:10:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_run_machine_started", "run", ["machine_id", "started_at", "id"])


def downgrade() -> None:
    op.drop_index("ix_run_machine_started", table_name="run")
