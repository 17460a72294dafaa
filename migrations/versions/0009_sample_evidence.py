"""sample evidence

Each sample carries what the operating system saw while it ran (wall and CPU
time, run-queue delay, involuntary context switches, steal): ``evidence``,
beside ``samples``; the samples it showed disturbed are kept in ``set_aside``.
A pass may now keep fewer clean samples than another, so ``pass_counts`` says how
many of ``samples`` each pass holds, in order.  Rows written before this revision
have none of them (empty: their passes hold equal shares).

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-26 15:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("measurement", schema=None) as batch_op:
        batch_op.add_column(sa.Column("evidence", sa.JSON(), nullable=False, server_default="{}"))
        batch_op.add_column(sa.Column("set_aside", sa.JSON(), nullable=False, server_default="{}"))
        batch_op.add_column(
            sa.Column("pass_counts", sa.JSON(), nullable=False, server_default="[]")
        )


def downgrade() -> None:
    with op.batch_alter_table("measurement", schema=None) as batch_op:
        batch_op.drop_column("pass_counts")
        batch_op.drop_column("set_aside")
        batch_op.drop_column("evidence")
