"""The ``kernel`` rows read back as values: each version's metadata (a
:class:`~benchdb.kernels.api.KernelInfo`), the row's ``info`` JSON (which holds a user
kernel's layout), and how many points a scope measured with it.
:mod:`benchdb.kernel_defs` turns them into definitions; only this module reads the rows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select

from ..kernels.api import KernelInfo
from .engine import Database
from .models import Kernel, Measurement, Run
from .scope import Scope


@dataclass(frozen=True)
class StoredKernel:
    """One version of a kernel as its row holds it; ``info.layout`` is None: a user
    kernel's layout is ``row_info["layout"]``, as stored (JSON)."""

    info: KernelInfo
    version: str
    row_info: dict[str, Any]


def _stored(row: Kernel) -> StoredKernel:
    """The metadata a ``kernel`` row stores (of its own version, which may be older than the
    code's for a built-in)."""
    info = dict(row.info or {})
    return StoredKernel(
        info=KernelInfo(
            name=row.name,
            family=row.family,
            ndim=row.ndim,
            flops_per_point=row.flops_per_point,
            loads_per_point=row.loads_per_point,
            stores_per_point=row.stores_per_point,
            arrays=row.arrays,
            description=row.description,
            footprint_version=row.footprint_version,
            write_allocate=bool(info.get("write_allocate", True)),
            extra={k: v for k, v in info.items() if k not in ("layout", "source_hash")},
            origin=row.origin,
            source_hash=info.get("source_hash"),
        ),
        version=row.version,
        row_info=info,
    )


def stored_user_kernels(db: Database) -> list[str]:
    """Names of the user kernels (plugins, programs) the database holds."""
    with db.reading() as s:
        stmt = select(Kernel.name).where(Kernel.origin != "builtin").distinct()
        return list(s.scalars(stmt.order_by(Kernel.name)))


def stored_user_kernel(db: Database, name: str, version: str | None = None) -> StoredKernel | None:
    """User kernel ``name`` at ``version`` (default: the newest version stored); None when
    the database holds no such kernel."""
    stmt = select(Kernel).where(Kernel.name == name, Kernel.origin != "builtin")
    if version is not None:
        stmt = stmt.where(Kernel.version == version)
    with db.reading() as s:
        row = s.scalars(stmt.order_by(Kernel.id.desc())).first()
        return _stored(row) if row is not None else None


def stored_kernels(db: Database, scope: Scope | None) -> list[tuple[StoredKernel, int, int]]:
    """Every kernel version the database holds, by name then age, with its valid and invalid
    measured points on ``scope`` (0 and 0 without one)."""
    with db.reading() as s:
        counts: dict[tuple[int, bool], int] = {}
        if scope is not None:
            stmt = (
                select(Measurement.kernel_id, Measurement.valid, func.count())
                .join(Run, Measurement.run_id == Run.id)
                .where(scope.runs())
                .group_by(Measurement.kernel_id, Measurement.valid)
            )
            counts = {(kid, bool(valid)): n for kid, valid, n in s.execute(stmt)}
        rows: Sequence[Kernel] = s.scalars(select(Kernel).order_by(Kernel.name, Kernel.id)).all()
        return [
            (_stored(k), counts.get((k.id, True), 0), counts.get((k.id, False), 0)) for k in rows
        ]
