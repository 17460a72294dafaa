"""communication evidence

The communication benchmarks read the operating system's evidence around each
sample too (collectors/mpi/collective_timing.py): ``evidence`` beside
``samples``, and the samples it showed disturbed in ``set_aside``, as
``measurement`` keeps them since 0009.  Points written before this revision have
neither (empty).

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-26 21:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("comm_measurement", schema=None) as batch_op:
        batch_op.add_column(sa.Column("evidence", sa.JSON(), nullable=False, server_default="{}"))
        batch_op.add_column(sa.Column("set_aside", sa.JSON(), nullable=False, server_default="{}"))


def downgrade() -> None:
    with op.batch_alter_table("comm_measurement", schema=None) as batch_op:
        batch_op.drop_column("set_aside")
        batch_op.drop_column("evidence")
