"""Idempotent writes of the shared entities: node classes, hosts, environments, kernels.

Many processes may register the same node class, host, environment or kernel
at the same moment (every node of a new batch job does).  Each has a unique
natural key, so one insert wins and the others fail; :func:`get_or_create`
then reads the row the winner wrote.  A SAVEPOINT keeps the failure from
spoiling the caller's transaction, on SQLite and PostgreSQL alike; on
PostgreSQL the losing insert waits for the winner's transaction to end, and
the read after it (READ COMMITTED: a fresh snapshot per statement) sees its
row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ..environment import EnvironmentInfo
from ..hashing import content_hash
from ..machine import MachineInfo
from .models import Base, Environment, Kernel, Machine, NodeClass

if TYPE_CHECKING:
    from .engine import Database

T = TypeVar("T", bound=Base)


@dataclass(frozen=True)
class RegisteredHost:
    """A host as stored: its row id and fingerprint, and its node class's."""

    id: int
    fingerprint: str
    hostname: str
    node_class_id: int
    node_class: str


def register_host(db: Database, info: MachineInfo) -> RegisteredHost:
    """Store ``info``'s host and node class in their own transaction (idempotent)."""
    with db.session() as s:
        m = register_machine(s, info)
        return RegisteredHost(
            m.id, m.fingerprint, m.hostname, m.node_class_id, m.node_class.fingerprint
        )


def get_or_create(session: Session, model: type[T], lookup: dict[str, Any], **values: Any) -> T:
    """The row matching ``lookup``, inserted with ``values`` if absent."""
    stmt = select(model).filter_by(**lookup)
    row = session.scalars(stmt).first()
    if row is not None:
        return row
    try:
        with session.begin_nested():
            row = model(**lookup, **values)
            session.add(row)
    except IntegrityError:
        row = session.scalars(stmt).one()
    return row


def register_node_class(session: Session, info: MachineInfo) -> NodeClass:
    """The row of ``info``'s node class, inserted if new."""
    cls = info.node_class
    fields = cls.to_dict()
    return get_or_create(session, NodeClass, {"fingerprint": cls.fingerprint}, **fields)


def register_machine(session: Session, info: MachineInfo) -> Machine:
    """The row of ``info``'s host (and its node class), inserted if new."""
    d = info.to_dict()
    node_class = register_node_class(session, info)
    return get_or_create(
        session,
        Machine,
        {"fingerprint": info.fingerprint},
        node_class_id=node_class.id,
        hostname=info.hostname,
        cpu_model=info.cpu_model,
        sockets=info.sockets,
        cores=info.cores,
        threads_per_core=info.threads_per_core,
        numa_nodes=info.numa_nodes,
        memory_bytes=info.memory_bytes,
        caches=d["caches"],
        isa_flags=d["isa_flags"],
        os=info.os,
        info=d,
    )


def register_environment(session: Session, info: EnvironmentInfo) -> Environment:
    return get_or_create(
        session,
        Environment,
        {"fingerprint": info.fingerprint},
        python=info.python,
        numpy=info.numpy,
        numba=info.numba,
        llvmlite=info.llvmlite,
        threading_layer=info.threading_layer,
        benchdb_version=info.benchdb_version,
        git_commit=info.git_commit,
        info=info.to_dict(),
    )


def kernel_version(info: Any) -> str:
    """The content hash that versions a kernel (a ``benchdb.kernels.api.KernelInfo``).

    Numbers are cast as the ``kernel`` table stores them, so that migration
    0004 derives the same hash from the columns of rows written before it.
    """
    body: dict[str, Any] = {
        "name": info.name,
        "family": info.family,
        "ndim": int(info.ndim),
        "flops_per_point": float(info.flops_per_point),
        "loads_per_point": float(info.loads_per_point),
        "stores_per_point": float(info.stores_per_point),
        "arrays": int(info.arrays),
        "footprint_version": int(info.footprint_version),
        "write_allocate": bool(info.write_allocate),
    }
    if info.source_hash is not None:
        body["source_hash"] = info.source_hash
    if info.layout is not None:
        body["layout"] = info.layout.to_json()
    return content_hash(body)


def register_kernel(session: Session, info: Any) -> Kernel:
    """Store a kernel's metadata (a ``benchdb.kernels.api.KernelInfo``), once per version."""
    extra: dict[str, Any] = {"write_allocate": info.write_allocate, **dict(info.extra)}
    if info.source_hash is not None:
        extra["source_hash"] = info.source_hash
    if info.layout is not None:
        extra["layout"] = info.layout.to_json()
    return get_or_create(
        session,
        Kernel,
        {"name": info.name, "version": kernel_version(info)},
        origin=info.origin,
        family=info.family,
        ndim=info.ndim,
        flops_per_point=info.flops_per_point,
        loads_per_point=info.loads_per_point,
        stores_per_point=info.stores_per_point,
        arrays=info.arrays,
        footprint_version=info.footprint_version,
        description=info.description,
        info=extra,
    )
