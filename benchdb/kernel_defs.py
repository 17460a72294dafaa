"""The kernels the database knows, by name and version: their metadata and layout.

A built-in kernel is defined by benchdb's own code (``benchdb.kernels``).  A
user's kernel (a plugin's or a program's) is defined by its ``kernel`` row:
the counts, and the layout from which its footprint and points follow for
any shape (:class:`~benchdb.kernels.layout.Layout`).  The predictor reads it
from here, so it never imports or runs the user's code (and never pays for a
numba import, docs/design.md "Dependency direction").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select

from .db.engine import Database
from .db.models import Kernel, Measurement, Run
from .errors import UserError
from .kernels.api import KernelError, KernelInfo
from .kernels.geometry import Geometry
from .kernels.layout import Layout
from .kernels.registry import BUILTIN

if TYPE_CHECKING:
    from .db.scope import Scope


@dataclass(frozen=True)
class KernelDefinition:
    """What a kernel counts per point and how its shapes map to points and bytes."""

    info: KernelInfo
    geometry: Geometry
    version: str | None = None  # None: the built-in definition of this benchdb

    @property
    def name(self) -> str:
        return self.info.name


_BUILTIN_GEOMETRY = {
    k.name: b.geometry_of(k.name)  # type: ignore[attr-defined]
    for b in BUILTIN.benchmarks.values()
    for k in b.kernels
}
_BUILTIN_INFO = {k.name: k for k in BUILTIN.kernels()}


def builtin_names() -> list[str]:
    return list(_BUILTIN_INFO)


def builtin_definition(name: str) -> KernelDefinition | None:
    info = _BUILTIN_INFO.get(name)
    return None if info is None else KernelDefinition(info, _BUILTIN_GEOMETRY[name])


def _info_of(row: Kernel, layout: Layout | None = None) -> KernelInfo:
    """The metadata a ``kernel`` row stores (of its own version, which may be older than the
    code's for a built-in)."""
    info = dict(row.info or {})
    return KernelInfo(
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
        layout=layout,
    )


def _from_row(row: Kernel) -> KernelDefinition:
    """A user kernel's definition from its row; UserError if the row cannot give one."""
    try:
        layout = Layout.from_json((row.info or {})["layout"])
    except (KeyError, TypeError, KernelError) as exc:
        raise UserError(
            f"kernel {row.name} (version {row.version[:12]}) has no usable layout in the "
            f"database ({exc}); collect it again with this benchdb"
        ) from None
    return KernelDefinition(_info_of(row, layout), layout.geometry(), row.version)


def stored_user_kernels(db: Database) -> list[str]:
    """Names of the user kernels (plugins, programs) the database holds."""
    with db.reading() as s:
        stmt = select(Kernel.name).where(Kernel.origin != "builtin").distinct()
        return list(s.scalars(stmt.order_by(Kernel.name)))


def definition(db: Database | None, name: str, version: str | None = None) -> KernelDefinition:
    """The definition of kernel ``name``: built-in, else its ``version`` in the database
    (default: the newest version stored); UserError naming the known kernels."""
    found = builtin_definition(name)
    if found is not None:
        return found
    if db is not None:
        stmt = select(Kernel).where(Kernel.name == name, Kernel.origin != "builtin")
        if version is not None:
            stmt = stmt.where(Kernel.version == version)
        with db.reading() as s:
            row = s.scalars(stmt.order_by(Kernel.id.desc())).first()
            if row is not None:
                return _from_row(row)
    stored = stored_user_kernels(db) if db is not None else []
    known = ", ".join([*builtin_names(), *stored])
    raise UserError(
        f"unknown kernel {name!r}; known kernels: {known} (your own loops appear once "
        "collected with `benchdb collect --program SPEC` or `--plugin MODULE`)"
    )


@dataclass(frozen=True)
class KernelSummary:
    """One version of a kernel as ``benchdb kernels`` lists it."""

    name: str
    version: str
    origin: str
    family: str
    ndim: int
    flops_per_point: float
    loads_per_point: float
    stores_per_point: float
    arrays: int
    description: str
    points_here: int  # valid measured points on the machine asked about
    invalid_here: int
    source: str  # the spec file, the plugin; "" for a built-in

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _summary(info: KernelInfo, version: str, counts: tuple[int, int] = (0, 0)) -> KernelSummary:
    extra = dict(info.extra)
    return KernelSummary(
        name=info.name,
        version=version,
        origin=info.origin,
        family=info.family,
        ndim=info.ndim,
        flops_per_point=float(info.flops_per_point),
        loads_per_point=float(info.loads_per_point),
        stores_per_point=float(info.stores_per_point),
        arrays=info.arrays,
        description=info.description,
        points_here=counts[0],
        invalid_here=counts[1],
        source=str(extra.get("program") or extra.get("plugin") or ""),
    )


def kernel_summaries(
    db: Database | None, scope: Scope | None, available: Sequence[KernelInfo] = ()
) -> list[KernelSummary]:
    """Every kernel version the database holds, with its valid and invalid measured
    points on ``scope``, and the ``available`` kernels (built-in, installed
    plugins) it does not hold yet; by name, stored versions oldest first."""
    from .db.repo import kernel_version

    stored = [] if db is None else _stored_summaries(db, scope)
    known = {(k.name, k.version) for k in stored}
    fresh = [
        _summary(info, v)
        for info in available
        if (info.name, v := kernel_version(info)) not in known
    ]
    return sorted([*stored, *fresh], key=lambda k: k.name)  # stable: stored versions first


def _stored_summaries(db: Database, scope: Scope | None) -> list[KernelSummary]:
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
            _summary(
                _info_of(k),
                k.version,
                (counts.get((k.id, True), 0), counts.get((k.id, False), 0)),
            )
            for k in rows
        ]
