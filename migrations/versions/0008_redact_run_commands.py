"""redact run commands

``run.command`` held the command line as typed, so a password given in a database URL
(``--db postgresql://me:secret@host/db``, ``BENCHDB_URL=...``) was stored in clear, and
``benchdb export`` passed it on.  New runs store the command with every URL password
masked (``benchdb.db.runs.new_run_row``); this revision masks the stored ones the same way,
through the same function.  Unlike 0006, which copies the code it derives from (a
fingerprint must not change when the code does), it imports it: a later, stricter
redaction can only mask more.  There is no way back: the downgrade leaves them masked.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02 09:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from benchdb.db.urls import redact_command

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    run = sa.table("run", sa.column("id", sa.Integer), sa.column("command", sa.Text))
    conn = op.get_bind()
    changed = [
        {"run_id": run_id, "masked": masked}
        for run_id, command in conn.execute(sa.select(run.c.id, run.c.command)).all()
        if (masked := redact_command(command)) != command
    ]
    if changed:
        conn.execute(
            run.update()
            .where(run.c.id == sa.bindparam("run_id"))
            .values(command=sa.bindparam("masked")),
            changed,
        )


def downgrade() -> None:
    """Nothing to undo: a masked password cannot be restored, and need not be."""
