"""kernel versions

A kernel is one row per *version*: a content hash of its counts and, for a
user's plugin or program, of its code, so that changed code never mixes with
old points.  ``origin`` says where it comes from (builtin, plugin, program).
Rows written before this revision are built-in kernels; their version is
derived from their columns exactly as ``benchdb.db.repo.kernel_version``
derives it (the formula is copied here: a migration must not change when the
code does).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23 23:00:00
"""

import hashlib
import json
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _version(row: sa.Row) -> str:
    info = row.info if isinstance(row.info, dict) else json.loads(row.info or "{}")
    body = {
        "name": row.name,
        "family": row.family,
        "ndim": int(row.ndim),
        "flops_per_point": float(repr(float(row.flops_per_point))),
        "loads_per_point": float(repr(float(row.loads_per_point))),
        "stores_per_point": float(repr(float(row.stores_per_point))),
        "arrays": int(row.arrays),
        "footprint_version": int(row.footprint_version),
        "write_allocate": bool(info.get("write_allocate", True)),
    }
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


def upgrade() -> None:
    with op.batch_alter_table("kernel", schema=None) as batch_op:
        batch_op.add_column(sa.Column("version", sa.String(length=64), nullable=True))
        batch_op.add_column(
            sa.Column("origin", sa.String(length=16), nullable=False, server_default="builtin")
        )
    kernel = sa.table(
        "kernel",
        sa.column("id", sa.Integer),
        sa.column("name", sa.String),
        sa.column("family", sa.String),
        sa.column("ndim", sa.Integer),
        sa.column("flops_per_point", sa.Float),
        sa.column("loads_per_point", sa.Float),
        sa.column("stores_per_point", sa.Float),
        sa.column("arrays", sa.Integer),
        sa.column("footprint_version", sa.Integer),
        sa.column("info", sa.JSON),
        sa.column("version", sa.String),
    )
    conn = op.get_bind()
    for row in conn.execute(sa.select(kernel)).all():
        conn.execute(kernel.update().where(kernel.c.id == row.id).values(version=_version(row)))
    with op.batch_alter_table("kernel", schema=None) as batch_op:
        batch_op.alter_column("version", existing_type=sa.String(length=64), nullable=False)
        batch_op.alter_column("origin", server_default=None)
        batch_op.drop_constraint("uq_kernel_name", type_="unique")
        batch_op.create_unique_constraint("uq_kernel_name_version", ["name", "version"])
        batch_op.create_index(batch_op.f("ix_kernel_name"), ["name"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("kernel", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_kernel_name"))
        batch_op.drop_constraint("uq_kernel_name_version", type_="unique")
        batch_op.create_unique_constraint("uq_kernel_name", ["name"])
        batch_op.drop_column("origin")
        batch_op.drop_column("version")
