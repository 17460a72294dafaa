"""Idempotent writes of the shared entities: machines, environments, kernels.

Two processes may register the same machine at the same moment; the unique
fingerprint makes one insert fail, and :func:`get_or_create` then reads the
row the other process wrote.  A SAVEPOINT keeps the failure from spoiling
the caller's transaction, on SQLite and PostgreSQL alike.
"""

from __future__ import annotations

from typing import Any, TypeVar

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ..environment import EnvironmentInfo
from ..hashing import content_hash
from ..machine import MachineInfo
from .models import Base, Environment, Kernel, Machine

T = TypeVar("T", bound=Base)


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


def register_machine(session: Session, info: MachineInfo) -> Machine:
    d = info.to_dict()
    return get_or_create(
        session,
        Machine,
        {"fingerprint": info.fingerprint},
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
