"""Static metadata of every timed kernel (what the database's ``kernel`` table stores).

No numba and no numpy here: the prediction path reads these records and must
not pay for a JIT import (docs/design.md, "Dependency direction").

Counting conventions, shared by all families so that rates compare:

* ``flops_per_point`` are *reference* flops as in paper 003 (Osprey et al.,
  HPCS 2014) Table I: add, subtract and multiply count 1, a divide counts 5.
* ``loads_per_point``/``stores_per_point`` count array elements per updated
  point *with reuse along the contiguous index* (paper 003, Table I: ``p(i,j)``
  and ``p(i+1,j)`` share one load stream, ``p(i,j+1)`` is another).
* ``arrays`` is the number of arrays in the *footprint*: for shallow all 13
  arrays of the model, not just those the loop touches (paper 003, eq. 9).
"""

from __future__ import annotations

from .api import KernelInfo

PRECISIONS = ("float64", "float32")

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


def _shallow_loop(name: str, touched: str, stores: int, loads: int, flops: int) -> KernelInfo:
    full = name.endswith("old")
    domain = "full (M+1)x(N+1) array" if full else "inner MxN points"
    return KernelInfo(
        name=f"shallow.{name}",
        family="shallow",
        ndim=2,
        flops_per_point=flops,
        loads_per_point=loads,
        stores_per_point=stores,
        arrays=SHALLOW_ARRAYS,
        description=f"shallow-water update loop {name} ({touched}); updates the {domain}",
        footprint_version=FULL_ARRAY_POINTS if full else 1,
        extra={"paper_table": "003 Table I", "touches": touched, "dtypes": PRECISIONS},
    )


SHALLOW_LOOP_KERNELS: tuple[KernelInfo, ...] = tuple(
    _shallow_loop(*row) for row in _SHALLOW_TABLE_I
)

SHALLOW_COPY = KernelInfo(
    name="shallow.copy",
    family="shallow",
    ndim=2,
    flops_per_point=0,
    loads_per_point=3,
    stores_per_point=3,
    arrays=SHALLOW_ARRAYS,
    description="the 3 array copies u=unew, v=vnew, p=pnew over the full (M+1)x(N+1) arrays",
    footprint_version=FULL_ARRAY_POINTS,
    extra={"dtypes": PRECISIONS},
)

SHALLOW_BOUNDARY = KernelInfo(
    name="shallow.boundary",
    family="shallow",
    ndim=2,
    flops_per_point=0,
    loads_per_point=0,
    stores_per_point=0,
    arrays=SHALLOW_ARRAYS,
    description=(
        "the 7 periodic boundary (halo) updates of cu, cv, z, h, unew, vnew, pnew; "
        "they move 14(M+N+1) elements per step, not a fixed number per point"
    ),
    extra={"elements_per_step": "14*(M+N+1)", "dtypes": PRECISIONS},
)

SHALLOW_STEP = KernelInfo(
    name="shallow.step",
    family="shallow",
    ndim=2,
    flops_per_point=sum(k.flops_per_point for k in SHALLOW_LOOP_KERNELS),
    loads_per_point=sum(k.loads_per_point for k in SHALLOW_LOOP_KERNELS)
    + SHALLOW_COPY.loads_per_point,
    stores_per_point=sum(k.stores_per_point for k in SHALLOW_LOOP_KERNELS)
    + SHALLOW_COPY.stores_per_point,
    arrays=SHALLOW_ARRAYS,
    description="one whole shallow-water time step, timed without per-loop timers",
    extra={"dtypes": PRECISIONS},
)

SHALLOW_KERNELS: tuple[KernelInfo, ...] = (
    *SHALLOW_LOOP_KERNELS,
    SHALLOW_COPY,
    SHALLOW_BOUNDARY,
    SHALLOW_STEP,
)

STENCIL2D5 = KernelInfo(
    name="stencil2d5",
    family="stencil",
    ndim=2,
    flops_per_point=6,
    loads_per_point=3,
    stores_per_point=1,
    arrays=2,
    description="2D 5-point smoothing sweep b = c0*a + c1*(4 neighbours) over interior points",
    extra={"dtypes": PRECISIONS},
)

STENCIL3D7 = KernelInfo(
    name="stencil3d7",
    family="stencil",
    ndim=3,
    flops_per_point=8,
    loads_per_point=5,
    stores_per_point=1,
    arrays=2,
    description="3D 7-point smoothing sweep b = c0*a + c1*(6 neighbours) over interior points",
    extra={"dtypes": PRECISIONS},
)

JACOBI2D = KernelInfo(
    name="jacobi2d",
    family="stencil",
    ndim=2,
    flops_per_point=9,
    loads_per_point=4,
    stores_per_point=1,
    arrays=3,
    description=(
        "one Jacobi iteration for the 2D Poisson problem -lap(u) = f with the squared "
        "update (the scaled residual) accumulated in the same sweep"
    ),
    extra={"dtypes": PRECISIONS},
)

TRIDIAG = KernelInfo(
    name="tridiag",
    family="tridiag",
    ndim=2,
    flops_per_point=13,
    loads_per_point=6,
    stores_per_point=3,
    arrays=5,
    description=(
        "batched Thomas solve of implicit vertical mixing over water columns of varying "
        "length (paper 004 section 10.1); a point is one level of one column"
    ),
    extra={"dtypes": PRECISIONS},
)


def _stream(
    op: str,
    formula: str,
    flops: int,
    loads: int,
    stores: int,
    arrays: int,
    write_allocate: bool = True,
) -> KernelInfo:
    return KernelInfo(
        name=f"stream.{op}",
        family="stream",
        ndim=1,
        flops_per_point=flops,
        loads_per_point=loads,
        stores_per_point=stores,
        arrays=arrays,
        description=f"STREAM-style {op}: {formula}",
        write_allocate=write_allocate,
        extra={"dtypes": PRECISIONS},
    )


STREAM_KERNELS: tuple[KernelInfo, ...] = (
    _stream("copy", "c = a", 0, 1, 1, 2),
    _stream("scale", "b = s*c", 1, 1, 1, 2),
    _stream("add", "c = a + b", 1, 2, 1, 3),
    _stream("triad", "a = b + s*c", 2, 2, 1, 3),
    _stream("sum", "read-only reduction s += a", 1, 1, 0, 1, write_allocate=False),
    _stream("fill", "write-only a = v", 0, 0, 1, 1),
)

ALL_KERNELS: tuple[KernelInfo, ...] = (
    *SHALLOW_KERNELS,
    STENCIL2D5,
    STENCIL3D7,
    JACOBI2D,
    TRIDIAG,
    *STREAM_KERNELS,
)
