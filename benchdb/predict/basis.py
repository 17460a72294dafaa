"""What a kernel's rate counts, and the points and footprint of any shape.

Paper 003 (Osprey et al., HPCS 2014) eq. 8-9: time = work per point x points x
iterations / P, with P looked up by memory footprint.  P is in flop/s for a
kernel that computes; for a data-only kernel (``stream.copy``,
``shallow.copy``, ``stream.fill``: zero flops) it is in B/s with STREAM
counting (loads + stores per point x element size, no write-allocate), and a
kernel that is neither (``shallow.boundary``, whose work is not per point) is
looked up in points/s.

Footprints and points come from the kernels' own geometry -- the
``benchdb.kernels`` registry for a built-in, the layout stored with a user's
kernel (:mod:`benchdb.kernel_defs`); pure Python, no numba -- so a shape that
was never measured gets exactly the footprint the collectors would have stored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..db.engine import Database
from ..errors import UserError
from ..kernel_defs import definition
from ..kernels.api import DTYPE_BYTES, KernelInfo
from ..kernels.geometry import Geometry
from ..kernels.registry import BUILTIN


@dataclass(frozen=True)
class RateBasis:
    """How one kernel's performance P is counted: ``work_per_point`` units per point."""

    kernel: KernelInfo
    geometry: Geometry
    precision: str
    work_per_point: float
    unit: str  # "flop/s", "B/s" or "point/s"
    version: str | None = None  # of a user's kernel; None: built-in, one definition for all

    def of_version(self, version: str | None, db: Database | None) -> RateBasis:
        """This basis for the kernel's ``version``: itself where that version shares
        its definition, so a prediction reads the definition once."""
        if self.version is None or self.version == version:
            return self
        return rate_basis(self.kernel.name, self.precision, db, version)

    @property
    def flops_per_point(self) -> float:
        return float(self.kernel.flops_per_point)

    @property
    def bytes_per_point(self) -> float:
        """STREAM counting (no write-allocate): what the roofline's bandwidths count."""
        return self.kernel.bytes_per_point(self.precision)

    def points_and_footprint(self, shapes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Points per iteration and footprint bytes of each row of ``shapes`` (n, ndim).

        The geometry formulas are written for one tuple; they are applied to a
        tuple of columns so numpy evaluates them for all rows at once, with a
        per-row fallback for a formula that cannot (the tridiagonal batch).
        """
        shapes = np.asarray(shapes, dtype=np.int64)
        if shapes.ndim != 2 or shapes.shape[1] != self.geometry.ndim:
            raise UserError(
                f"kernel {self.kernel.name} takes {self.geometry.ndim}-D shapes "
                f"(e.g. {'x'.join(['100'] * self.geometry.ndim)}); got shape array "
                f"{shapes.shape}"
            )
        low = shapes.min(axis=1) < self.geometry.min_extent
        if low.any():
            bad = "x".join(str(int(v)) for v in shapes[np.argmax(low)])
            raise UserError(
                f"shape {bad} is too small for {self.kernel.name}: every extent must be "
                f">= {self.geometry.min_extent}"
            )
        itemsize = DTYPE_BYTES[self.precision]
        cols = tuple(shapes[:, d] for d in range(shapes.shape[1]))
        try:
            points = np.broadcast_to(self.geometry.points(cols), len(shapes)).astype(float)
            footprint = np.broadcast_to(
                np.asarray(self.geometry.bytes_of(cols, itemsize), dtype=float), len(shapes)
            ).astype(float)
        except (TypeError, ValueError):
            rows = [tuple(int(v) for v in row) for row in shapes]
            points = np.array([self.geometry.points(r) for r in rows], dtype=float)
            footprint = np.array(
                [self.geometry.footprint_bytes(r, self.precision) for r in rows], dtype=float
            )
        return points, footprint

    def blocks(self, shapes: np.ndarray) -> Blocks:
        """``shapes`` with their points and footprints (:meth:`points_and_footprint`)."""
        return Blocks(self, shapes, *self.points_and_footprint(shapes))


@dataclass(frozen=True)
class Blocks:
    """Query shapes sized once under ``basis``: a prediction checks them before it
    writes a fit and evaluates the same arrays."""

    basis: RateBasis
    shapes: np.ndarray  # (n, ndim), as given
    points: np.ndarray
    footprint: np.ndarray


def benchmark_of(kernel: str) -> str:
    """What ``benchdb collect --kernels`` takes to measure ``kernel``: its built-in
    benchmark, else the kernel's family (a user's program or plugin)."""
    return BUILTIN.benchmark_of().get(kernel, kernel.split(".", 1)[0])


def rate_basis(
    kernel: str,
    precision: str = "float64",
    db: Database | None = None,
    version: str | None = None,
) -> RateBasis:
    """The counting basis of ``kernel`` (a user's kernel: its ``version`` in ``db``,
    default the newest); :class:`UserError` listing the known kernels."""
    if precision not in DTYPE_BYTES:
        raise UserError(f"unknown precision {precision!r}; use one of: {', '.join(DTYPE_BYTES)}")
    found = definition(db, kernel, version)
    info = found.info
    if info.flops_per_point > 0:
        work, unit = float(info.flops_per_point), "flop/s"
    elif info.loads_per_point + info.stores_per_point > 0:
        work, unit = info.bytes_per_point(precision), "B/s"
    else:
        work, unit = 1.0, "point/s"
    return RateBasis(info, found.geometry, precision, work, unit, found.version)


def shapes_array(shapes: Any, ndim: int) -> np.ndarray:
    """Shapes given as an (n, ndim) array, a list of tuples or of 'MxN' strings."""
    if isinstance(shapes, str):
        shapes = [shapes]
    if not isinstance(shapes, np.ndarray):
        from ..shapes import parse_shape

        shapes = [parse_shape(s, ndim) if isinstance(s, str) else np.ravel(s) for s in shapes]
    arr = np.asarray(shapes, dtype=np.int64)
    if arr.ndim == 1 and ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[1] != ndim:
        raise UserError(f"shapes must be an (n, {ndim}) array of positive integers")
    if (arr <= 0).any():
        raise UserError("a shape has a zero or negative extent; every extent must be positive")
    return arr
