"""measurement passes

A sweep may measure each point in several passes; ``passes`` counts those
whose samples a row holds (rows written before this revision hold one).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-21 07:20:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("measurement", schema=None) as batch_op:
        batch_op.add_column(sa.Column("passes", sa.Integer(), nullable=False, server_default="1"))


def downgrade() -> None:
    with op.batch_alter_table("measurement", schema=None) as batch_op:
        batch_op.drop_column("passes")
