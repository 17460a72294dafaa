"""full-array points

The shallow-water loops that update the full (M+1)x(N+1) arrays -- the time
filter (``uold``, ``vold``, ``pold``, paper 003 section II) and the copies --
were rated per inner M x N point, understating their flop and byte rates by
(M+1)(N+1)/MN (4x at 1x1).  They are now rated per point they update
(``footprint_version`` 2, so a new kernel version): stored rows get their
points and rates converted, and their kernel rows the new version, derived as
``benchdb.db.repo.kernel_version`` derives it (the formula is copied: a
migration must not change when the code does).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24 01:00:00
"""

import hashlib
import json
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FULL_ARRAY = ("shallow.uold", "shallow.vold", "shallow.pold", "shallow.copy")

kernel = sa.table(
    "kernel",
    sa.column("id", sa.Integer),
    sa.column("name", sa.String),
    sa.column("origin", sa.String),
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
measurement = sa.table(
    "measurement",
    sa.column("id", sa.Integer),
    sa.column("kernel_id", sa.Integer),
    sa.column("shape", sa.JSON),
    sa.column("points", sa.BigInteger),
    sa.column("flop_rate", sa.Float),
    sa.column("byte_rate", sa.Float),
)


def _version(row: sa.Row, footprint_version: int) -> str:
    info = row.info if isinstance(row.info, dict) else json.loads(row.info or "{}")
    body = {
        "name": row.name,
        "family": row.family,
        "ndim": int(row.ndim),
        "flops_per_point": float(row.flops_per_point),
        "loads_per_point": float(row.loads_per_point),
        "stores_per_point": float(row.stores_per_point),
        "arrays": int(row.arrays),
        "footprint_version": footprint_version,
        "write_allocate": bool(info.get("write_allocate", True)),
    }
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


def _convert(to_full: bool) -> None:
    conn = op.get_bind()
    old, new = (1, 2) if to_full else (2, 1)
    rows = conn.execute(
        sa.select(kernel).where(
            kernel.c.name.in_(FULL_ARRAY),
            kernel.c.origin == "builtin",
            kernel.c.footprint_version == old,
        )
    ).all()
    for k in rows:
        conn.execute(
            kernel.update()
            .where(kernel.c.id == k.id)
            .values(footprint_version=new, version=_version(k, new))
        )
        stored = conn.execute(sa.select(measurement).where(measurement.c.kernel_id == k.id))
        for m in stored.all():
            shape = m.shape if isinstance(m.shape, list) else json.loads(m.shape)
            inner, full = shape[0] * shape[1], (shape[0] + 1) * (shape[1] + 1)
            points = full if to_full else inner
            scale = points / m.points
            conn.execute(
                measurement.update()
                .where(measurement.c.id == m.id)
                .values(
                    points=points,
                    flop_rate=None if m.flop_rate is None else m.flop_rate * scale,
                    byte_rate=None if m.byte_rate is None else m.byte_rate * scale,
                )
            )


def upgrade() -> None:
    _convert(to_full=True)


def downgrade() -> None:
    _convert(to_full=False)
