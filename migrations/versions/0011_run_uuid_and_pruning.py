"""run uuid column and pruned samples

A run's natural key (``benchdb import`` matches runs by it) lived only inside the
``run.config`` JSON, so every import scanned the run table for it; at a year of CI
history that is a scan of 10^5 JSON documents per file.  ``run.uuid`` holds the key in
a unique, indexed column, filled here from ``config["uuid"]`` or, for a run without one
(communication and application runs), from the content hash
:func:`benchdb.db.transfer.run_key` has always given such a run.

``run.samples_pruned_at`` records when ``benchdb db prune`` dropped the run's raw
samples (its point statistics stay), so a command that needs samples can say so
instead of reading empty lists.  ``run.started_at`` gets an index: history, reports
and pruning select runs by age.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-28 23:50:00
"""

from collections.abc import Sequence
from datetime import datetime

import sqlalchemy as sa
from alembic import op

from benchdb.hashing import content_hash

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _fallback_key(fingerprint: str, hostname: str, pid: int | None, started: object) -> str:
    """The key ``run_key`` gives a run whose config holds no uuid (as of this revision)."""
    when = started if isinstance(started, datetime) else datetime.fromisoformat(str(started))
    return content_hash(
        {
            "machine": fingerprint,
            "hostname": hostname,
            "pid": pid,
            "started_at": when.replace(tzinfo=None).isoformat(),
        }
    )[:32]


def upgrade() -> None:
    with op.batch_alter_table("run", schema=None) as batch_op:
        batch_op.add_column(sa.Column("uuid", sa.String(length=64), nullable=True))
        batch_op.add_column(
            sa.Column("samples_pruned_at", sa.DateTime(timezone=True), nullable=True)
        )
    run = sa.table(
        "run",
        sa.column("id", sa.Integer),
        sa.column("machine_id", sa.Integer),
        sa.column("config", sa.JSON),
        sa.column("hostname", sa.String),
        sa.column("pid", sa.Integer),
        sa.column("started_at", sa.DateTime(timezone=True)),
        sa.column("uuid", sa.String),
    )
    machine = sa.table("machine", sa.column("id", sa.Integer), sa.column("fingerprint", sa.String))
    conn = op.get_bind()
    rows = conn.execute(
        sa.select(
            run.c.id, run.c.config, machine.c.fingerprint, run.c.hostname, run.c.pid,
            run.c.started_at,
        ).join(machine, machine.c.id == run.c.machine_id)
    ).all()  # fmt: skip
    keys = [
        {
            "run_id": run_id,
            "key": str((config or {}).get("uuid") or "")
            or _fallback_key(fingerprint, hostname, pid, started),
        }
        for run_id, config, fingerprint, hostname, pid, started in rows
    ]
    if keys:
        conn.execute(
            run.update().where(run.c.id == sa.bindparam("run_id")).values(uuid=sa.bindparam("key")),
            keys,
        )
    with op.batch_alter_table("run", schema=None) as batch_op:
        batch_op.alter_column("uuid", existing_type=sa.String(length=64), nullable=False)
        batch_op.create_index(batch_op.f("ix_run_uuid"), ["uuid"], unique=True)
        batch_op.create_index(batch_op.f("ix_run_started_at"), ["started_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("run", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_run_started_at"))
        batch_op.drop_index(batch_op.f("ix_run_uuid"))
        batch_op.drop_column("samples_pruned_at")
        batch_op.drop_column("uuid")
