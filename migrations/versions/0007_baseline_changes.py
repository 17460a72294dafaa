"""baseline changes

Every pin of a node class's baseline is kept with the reason given
(``benchdb baseline set RUN --reason TEXT``), so that ``benchdb history`` can
show where and why a baseline was reset.  The baselines pinned before this
revision become the first change of their class, without a reason.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24 07:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "baseline_change",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("node_class_id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("previous_run_id", sa.Integer(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("set_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["node_class_id"],
            ["node_class.id"],
            name=op.f("fk_baseline_change_node_class_id_node_class"),
        ),
        sa.ForeignKeyConstraint(
            ["previous_run_id"],
            ["run.id"],
            name=op.f("fk_baseline_change_previous_run_id_run"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["run_id"], ["run.id"], name=op.f("fk_baseline_change_run_id_run"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_baseline_change")),
    )
    with op.batch_alter_table("baseline_change", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_baseline_change_node_class_id"), ["node_class_id"], unique=False
        )
    baseline = sa.table(
        "baseline",
        sa.column("node_class_id", sa.Integer),
        sa.column("run_id", sa.Integer),
        sa.column("set_at", sa.DateTime(timezone=True)),
    )
    change = sa.table(
        "baseline_change",
        sa.column("node_class_id", sa.Integer),
        sa.column("run_id", sa.Integer),
        sa.column("set_at", sa.DateTime(timezone=True)),
    )
    op.execute(
        change.insert().from_select(
            ["node_class_id", "run_id", "set_at"],
            sa.select(baseline.c.node_class_id, baseline.c.run_id, baseline.c.set_at),
        )
    )


def downgrade() -> None:
    with op.batch_alter_table("baseline_change", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_baseline_change_node_class_id"))
    op.drop_table("baseline_change")
