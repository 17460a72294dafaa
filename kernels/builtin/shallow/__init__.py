"""The shallow-water model's kernels: the ten loops of paper 003 Table I, the copies,
the boundary updates and the whole step, timed together in one benchmark.

The one built-in family that is a package rather than one module of
:class:`~..declared.BuiltinKernel` declarations (docs/design.md, "Built-in
kernels"): its loops are timed inside the full time step, thirteen phases run
by one compiled driver that reads the clock between them and that the
distributed model (``benchdb.collectors.app``) runs too, over a state of
thirteen arrays.  Three modules, each imported only by those who need it:

* here, the metadata and the geometry (no numpy, no numba: the predictor reads them);
* :mod:`.model`, the model as data: constants, state, initial conditions and the
  numpy reference step (no numba: the Fortran and C examples are checked against it);
* :mod:`.step`, the compiled phases and drivers (numba, loaded on the first ``prepare``).

``arrays`` is the number of arrays in the footprint: all 13 arrays of the
model, not just those the loop touches (paper 003, eq. 9).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ...api import KernelInfo, Shape, Verification
from ...declared import ByGeometry, builtin_info
from ...geometry import Geometry

ORDER = 10  # the family's place in listings and in a collection's plan

SHALLOW_ARRAYS = 13

# Paper 003 Table I, in loop order: (name, arrays touched, stores, loads with reuse, flops).
_SHALLOW_TABLE_I = (
    ("cu", "cu, p, u", 1, 2, 3),
    ("cv", "cv, p, v", 1, 3, 3),
    ("z", "z, v, u, p", 1, 5, 13),
    ("h", "h, p, u, v", 1, 4, 9),
    ("unew", "unew, uold, z, cv, h", 1, 6, 10),
    ("vnew", "vnew, vold, z, cu, h", 1, 6, 10),
    ("pnew", "pnew, pold, cu, cv", 1, 4, 6),
    ("uold", "uold, u, unew", 1, 3, 5),
    ("vold", "vold, v, vnew", 1, 3, 5),
    ("pold", "pold, p, pnew", 1, 3, 5),
)
SHALLOW_LOOPS: tuple[str, ...] = tuple(row[0] for row in _SHALLOW_TABLE_I)
SHALLOW_FULL_ARRAY = ("shallow.uold", "shallow.vold", "shallow.pold", "shallow.copy")


# Version 2 of the points a kernel is rated over: the loops that update the full arrays
# count (M+1)(N+1) points (version 1 counted M x N for every loop; migration 0005).
FULL_ARRAY_POINTS = 2


def _shallow(
    name: str, counts: tuple[float, float, float], description: str, **more: Any
) -> KernelInfo:
    return builtin_info(
        f"shallow.{name}", "shallow", 2, counts, SHALLOW_ARRAYS, description, **more
    )


def _shallow_loop(name: str, touched: str, stores: int, loads: int, flops: int) -> KernelInfo:
    full = name.endswith("old")
    domain = "full (M+1)x(N+1) array" if full else "inner MxN points"
    return _shallow(
        name,
        (flops, loads, stores),
        f"shallow-water update loop {name} ({touched}); updates the {domain}",
        footprint_version=FULL_ARRAY_POINTS if full else 1,
        extra={"paper_table": "003 Table I", "touches": touched},
    )


SHALLOW_LOOP_KERNELS: tuple[KernelInfo, ...] = tuple(
    _shallow_loop(*row) for row in _SHALLOW_TABLE_I
)

SHALLOW_COPY = _shallow(
    "copy",
    (0, 3, 3),
    "the 3 array copies u=unew, v=vnew, p=pnew over the full (M+1)x(N+1) arrays",
    footprint_version=FULL_ARRAY_POINTS,
)

SHALLOW_BOUNDARY = _shallow(
    "boundary",
    (0, 0, 0),
    "the 7 periodic boundary (halo) updates of cu, cv, z, h, unew, vnew, pnew; "
    "they move 14(M+N+1) elements per step, not a fixed number per point",
    extra={"elements_per_step": "14*(M+N+1)"},
)

SHALLOW_STEP = _shallow(
    "step",
    (
        sum(k.flops_per_point for k in SHALLOW_LOOP_KERNELS),
        sum(k.loads_per_point for k in SHALLOW_LOOP_KERNELS) + SHALLOW_COPY.loads_per_point,
        sum(k.stores_per_point for k in SHALLOW_LOOP_KERNELS) + SHALLOW_COPY.stores_per_point,
    ),
    "one whole shallow-water time step, timed without per-loop timers",
)

SHALLOW_KERNELS: tuple[KernelInfo, ...] = (
    *SHALLOW_LOOP_KERNELS,
    SHALLOW_COPY,
    SHALLOW_BOUNDARY,
    SHALLOW_STEP,
)

SHALLOW = Geometry(
    ndim=2,
    min_extent=1,
    points=lambda s: s[0] * s[1],
    # paper 003 eq. (9): (M+1)(N+1) x 13 arrays
    elements=lambda s: SHALLOW_ARRAYS * (s[0] + 1) * (s[1] + 1),
    contiguous_axis=0,
)
# The loops that update the full (M+1)(N+1) arrays (paper 003 section II: the time
# filter; and the copies): the same footprint, more points.
SHALLOW_FULL = replace(SHALLOW, points=lambda s: (s[0] + 1) * (s[1] + 1))


@dataclass(frozen=True)
class ShallowBenchmark(ByGeometry):
    """The model on one shape: every shallow kernel timed in each repetition
    (:class:`.step.ShallowPrepared`), checked against :func:`.model.reference_run`."""

    name: str = "shallow"
    kernels: tuple[KernelInfo, ...] = SHALLOW_KERNELS
    geometry: Geometry = SHALLOW
    check_shape: Shape = (33, 20)

    def geometry_of(self, kernel: str) -> Geometry:
        """The loops over the full arrays are rated over their (M+1)(N+1) points."""
        return SHALLOW_FULL if kernel in SHALLOW_FULL_ARRAY else self.geometry

    def prepare(self, shape: Shape, precision: str, threads: int = 1) -> Any:
        from .step import prepare

        return prepare(self, self.checked(shape, precision, threads), precision, threads)

    def verify(self, precision: str, threads: int) -> Verification:
        from .step import verify

        return verify(self, precision, threads)


BENCHDB_KERNELS = [ShallowBenchmark()]
