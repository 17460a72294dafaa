"""node classes

A machine was one fingerprint over the hostname, MemTotal and every cpuinfo
flag, so an OS or microcode update made a new machine and identical nodes never
pooled.  Identity is now a node class (what sets performance) and a host (the
node's name): see ``benchdb.node_class``.  This revision

* creates ``node_class`` and gives every ``machine`` row (now: a host) its
  class, derived from the row's columns exactly as
  ``benchdb.node_class.class_fields`` derives it (the formula is copied: a
  migration must not change when the code does);
* merges machine rows of the same class and hostname -- the same host before
  and after an update -- into the oldest one: their runs and fitted models
  move to it, and its fingerprint becomes the host fingerprint;
* gives every ``model`` row the class of its machine (fits are looked up per
  class and data hash; two rows of one class and data keep the older);
* keys ``baseline`` by class: where several machines of a class had a pinned
  run, the most recently pinned one stays;
* stores in every run without a ``uuid`` the natural key ``benchdb export``
  gave it (derived from its machine's old fingerprint), so that exports
  written before and after this revision still match its runs.

Downgrading restores the per-machine fingerprints from each host's stored
description (merged hosts stay merged) and the per-machine baselines.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24 08:00:00
"""

import hashlib
import json
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

X86 = re.compile(r"sse\w*|pni|ssse3|avx\w*|fma4?|f16c|xop|amx\w*|bmi[12]|popcnt|abm|movbe")
AARCH64 = re.compile(r"fp|asimd\w*|sve\w*|sme\w*|fphp|fcma|frint|i8mm|bf16|atomics")
ISA = {"x86_64": X86, "i686": X86, "aarch64": AARCH64, "arm64": AARCH64}

HARDWARE = {  # the columns a machine row had and its node class keeps
    "cpu_model": sa.String(length=255),
    "sockets": sa.Integer(),
    "cores": sa.Integer(),
    "threads_per_core": sa.Integer(),
    "numa_nodes": sa.Integer(),
    "memory_bytes": sa.BigInteger(),
    "caches": sa.JSON(),
}


def _hardware() -> list[sa.ColumnClause]:
    return [sa.column(name, kind) for name, kind in HARDWARE.items()]


machine = sa.table(
    "machine",
    sa.column("id", sa.Integer),
    sa.column("fingerprint", sa.String),
    sa.column("node_class_id", sa.Integer),
    sa.column("hostname", sa.String),
    *_hardware(),
    sa.column("isa_flags", sa.JSON),
    sa.column("os", sa.String),
    sa.column("info", sa.JSON),
)
node_class = sa.table(
    "node_class",
    sa.column("id", sa.Integer),
    sa.column("fingerprint", sa.String),
    sa.column("architecture", sa.String),
    *_hardware(),
    sa.column("isa_features", sa.JSON),
    sa.column("created_at", sa.DateTime(timezone=True)),
)
run = sa.table(
    "run",
    sa.column("id", sa.Integer),
    sa.column("machine_id", sa.Integer),
    sa.column("config", sa.JSON),
    sa.column("hostname", sa.String),
    sa.column("pid", sa.Integer),
    sa.column("started_at", sa.DateTime(timezone=True)),
)


def _baseline_table(key: str) -> sa.TableClause:
    """``baseline`` keyed by ``key``: ``machine_id`` before this revision, ``node_class_id``
    after it."""
    return sa.table(
        "baseline",
        sa.column(key, sa.Integer),
        sa.column("run_id", sa.Integer),
        sa.column("set_at", sa.DateTime(timezone=True)),
    )


old_baseline, class_baseline = _baseline_table("machine_id"), _baseline_table("node_class_id")
model = sa.table(
    "model",
    sa.column("id", sa.Integer),
    sa.column("kind", sa.String),
    sa.column("subject", sa.String),
    sa.column("node_class_id", sa.Integer),
    sa.column("machine_id", sa.Integer),
    sa.column("data_hash", sa.String),
)


def _hash(obj: Any) -> str:
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def _round_memory(nbytes: int) -> int:
    if nbytes <= 0:
        return 0
    step = 1 << max(int(nbytes).bit_length() - 4, 0)
    return -(-int(nbytes) // step) * step


def _class_fields(row: sa.Row) -> dict[str, Any]:
    caches = [
        {
            "name": str(c["name"]),
            "level": int(c["level"]),
            "type": str(c["type"]),
            "size_bytes": int(c["size_bytes"]),
            "line_bytes": int(c["line_bytes"]),
            "associativity": int(c["associativity"]),
            "shared_by": len(c.get("shared_cpus") or ()),
        }
        for c in _json(row.caches) or []
    ]
    architecture = str(row.os).split()[-1]
    wanted = ISA.get(architecture)
    flags = _json(row.isa_flags) or []
    return {
        "architecture": architecture,
        "cpu_model": " ".join(str(row.cpu_model).split()),
        "sockets": int(row.sockets),
        "cores": int(row.cores),
        "threads_per_core": int(row.threads_per_core),
        "numa_nodes": int(row.numa_nodes),
        "memory_bytes": _round_memory(int(row.memory_bytes)),
        "caches": sorted(caches, key=lambda c: (c["level"], c["name"])),
        "isa_features": sorted({f for f in flags if wanted and wanted.fullmatch(f)}),
    }


def _keep_run_keys(conn: sa.Connection) -> None:
    """``run.config["uuid"]`` = the key ``benchdb.db.transfer.run_key`` derived from the
    machine's fingerprint, for runs that have none (the formula is copied)."""
    fingerprints = dict(conn.execute(sa.select(machine.c.id, machine.c.fingerprint)).all())
    for r in conn.execute(sa.select(run)).all():
        config = dict(_json(r.config) or {})
        if config.get("uuid"):
            continue
        key = _hash(
            {
                "machine": fingerprints[r.machine_id],
                "hostname": r.hostname,
                "pid": r.pid,
                "started_at": r.started_at.replace(tzinfo=None).isoformat(),
            }
        )[:32]
        conn.execute(run.update().where(run.c.id == r.id).values(config={**config, "uuid": key}))


def upgrade() -> None:
    conn = op.get_bind()
    _keep_run_keys(conn)
    baselines = conn.execute(sa.select(old_baseline)).all()
    op.drop_table("baseline")
    op.create_table(
        "node_class",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("fingerprint", sa.String(length=64), nullable=False),
        sa.Column("architecture", sa.String(length=64), nullable=False),
        *(sa.Column(name, kind, nullable=False) for name, kind in HARDWARE.items()),
        sa.Column("isa_features", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_node_class")),
        sa.UniqueConstraint("fingerprint", name=op.f("uq_node_class_fingerprint")),
    )
    with op.batch_alter_table("machine", schema=None) as batch_op:
        batch_op.add_column(sa.Column("node_class_id", sa.Integer(), nullable=True))
    with op.batch_alter_table("model", schema=None) as batch_op:
        batch_op.add_column(sa.Column("node_class_id", sa.Integer(), nullable=True))

    classes: dict[str, int] = {}
    hosts: dict[str, int] = {}  # host fingerprint -> surviving machine id
    merged: dict[int, int] = {}  # machine id -> surviving machine id
    for row in conn.execute(sa.select(machine).order_by(machine.c.id)).all():
        fields = _class_fields(row)
        class_fp = _hash(fields)
        if class_fp not in classes:
            classes[class_fp] = conn.execute(
                node_class.insert()
                .values(fingerprint=class_fp, created_at=datetime.now(UTC), **fields)
                .returning(node_class.c.id)
            ).scalar_one()
        host_fp = _hash({"node_class": class_fp, "host": row.hostname})
        survivor = hosts.setdefault(host_fp, row.id)
        merged[row.id] = survivor
        if survivor == row.id:
            conn.execute(
                machine.update()
                .where(machine.c.id == row.id)
                .values(fingerprint=host_fp, node_class_id=classes[class_fp])
            )
        else:
            for table in (run, model):
                conn.execute(
                    table.update().where(table.c.machine_id == row.id).values(machine_id=survivor)
                )
            conn.execute(machine.delete().where(machine.c.id == row.id))

    conn.execute(
        model.update().values(
            node_class_id=sa.select(machine.c.node_class_id)
            .where(machine.c.id == model.c.machine_id)
            .scalar_subquery()
        )
    )
    conn.execute(model.delete().where(model.c.node_class_id.is_(None)))  # no machine: unreachable
    keep = (
        sa.select(sa.func.min(model.c.id))
        .group_by(model.c.kind, model.c.subject, model.c.node_class_id, model.c.data_hash)
        .scalar_subquery()
    )
    conn.execute(model.delete().where(model.c.id.not_in(keep)))

    with op.batch_alter_table("machine", schema=None) as batch_op:
        batch_op.alter_column("node_class_id", existing_type=sa.Integer(), nullable=False)
        batch_op.create_index(batch_op.f("ix_machine_node_class_id"), ["node_class_id"])
        batch_op.create_foreign_key(
            batch_op.f("fk_machine_node_class_id_node_class"), "node_class", ["node_class_id"],
            ["id"],
        )  # fmt: skip
    with op.batch_alter_table("model", schema=None) as batch_op:
        batch_op.alter_column("node_class_id", existing_type=sa.Integer(), nullable=False)
        batch_op.drop_constraint("uq_model_fit", type_="unique")
        batch_op.create_unique_constraint(
            "uq_model_fit", ["kind", "subject", "node_class_id", "data_hash"]
        )
        batch_op.create_index(batch_op.f("ix_model_node_class_id"), ["node_class_id"])
        batch_op.create_foreign_key(
            batch_op.f("fk_model_node_class_id_node_class"), "node_class", ["node_class_id"], ["id"]
        )

    baseline = op.create_table(
        "baseline",
        sa.Column("node_class_id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("set_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["node_class_id"], ["node_class.id"], name=op.f("fk_baseline_node_class_id_node_class")
        ),
        sa.ForeignKeyConstraint(
            ["run_id"], ["run.id"], name=op.f("fk_baseline_run_id_run"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("node_class_id", name=op.f("pk_baseline")),
    )
    class_of = dict(conn.execute(sa.select(machine.c.id, machine.c.node_class_id)).all())
    pinned: dict[int, sa.Row] = {}
    for b in sorted(baselines, key=lambda b: b.set_at):  # the latest pin of a class wins
        pinned[class_of[merged[b.machine_id]]] = b
    if pinned:
        op.bulk_insert(
            baseline,
            [
                {"node_class_id": c, "run_id": b.run_id, "set_at": b.set_at}
                for c, b in pinned.items()
            ],
        )


def _old_fingerprint(info: Any) -> str:
    """The fingerprint benchdb gave a machine before node classes, from its description."""
    d = dict(_json(info) or {})
    for volatile in ("kernel_release", "source", "extra"):
        d.pop(volatile, None)
    return _hash(d)


def downgrade() -> None:
    conn = op.get_bind()
    baselines = conn.execute(
        sa.select(class_baseline.c.run_id, class_baseline.c.set_at, run.c.machine_id).join(
            run, run.c.id == class_baseline.c.run_id
        )
    ).all()
    op.drop_table("baseline")
    for row in conn.execute(sa.select(machine.c.id, machine.c.info)).all():
        conn.execute(
            machine.update()
            .where(machine.c.id == row.id)
            .values(fingerprint=_old_fingerprint(row.info))
        )
    conn.execute(model.delete().where(model.c.machine_id.is_(None)))
    keep = (
        sa.select(sa.func.min(model.c.id))
        .group_by(model.c.kind, model.c.subject, model.c.machine_id, model.c.data_hash)
        .scalar_subquery()
    )
    conn.execute(model.delete().where(model.c.id.not_in(keep)))
    with op.batch_alter_table("model", schema=None) as batch_op:
        batch_op.drop_constraint("fk_model_node_class_id_node_class", type_="foreignkey")
        batch_op.drop_index(batch_op.f("ix_model_node_class_id"))
        batch_op.drop_constraint("uq_model_fit", type_="unique")
        batch_op.create_unique_constraint(
            "uq_model_fit", ["kind", "subject", "machine_id", "data_hash"]
        )
        batch_op.drop_column("node_class_id")
    with op.batch_alter_table("machine", schema=None) as batch_op:
        batch_op.drop_constraint("fk_machine_node_class_id_node_class", type_="foreignkey")
        batch_op.drop_index(batch_op.f("ix_machine_node_class_id"))
        batch_op.drop_column("node_class_id")
    op.drop_table("node_class")
    baseline = op.create_table(
        "baseline",
        sa.Column("machine_id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("set_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["machine_id"], ["machine.id"], name=op.f("fk_baseline_machine_id_machine")
        ),
        sa.ForeignKeyConstraint(
            ["run_id"], ["run.id"], name=op.f("fk_baseline_run_id_run"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("machine_id", name=op.f("pk_baseline")),
    )
    if baselines:
        op.bulk_insert(
            baseline,
            [
                {"machine_id": b.machine_id, "run_id": b.run_id, "set_at": b.set_at}
                for b in baselines
            ],
        )
