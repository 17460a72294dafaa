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
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from .db.engine import Database
from .db.kernel_rows import StoredKernel, stored_kernels, stored_user_kernel, stored_user_kernels
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


def _definition(stored: StoredKernel) -> KernelDefinition:
    """A user kernel's definition from its row; UserError if the row cannot give one."""
    try:
        layout = Layout.from_json(stored.row_info["layout"])
    except (KeyError, TypeError, KernelError) as exc:
        raise UserError(
            f"kernel {stored.info.name} (version {stored.version[:12]}) has no usable layout "
            f"in the database ({exc}); collect it again with this benchdb"
        ) from None
    info = replace(stored.info, layout=layout)
    return KernelDefinition(info, layout.geometry(), stored.version)


def definition(db: Database | None, name: str, version: str | None = None) -> KernelDefinition:
    """The definition of kernel ``name``: built-in, else its ``version`` in the database
    (default: the newest version stored); UserError naming the known kernels."""
    found = builtin_definition(name)
    if found is not None:
        return found
    stored = stored_user_kernel(db, name, version) if db is not None else None
    if stored is not None:
        return _definition(stored)
    known = ", ".join([*builtin_names(), *(stored_user_kernels(db) if db is not None else [])])
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
    return [
        _summary(k.info, k.version, (valid, invalid))
        for k, valid, invalid in stored_kernels(db, scope)
    ]
