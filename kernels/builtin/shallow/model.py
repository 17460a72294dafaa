"""The NCAR shallow-water model as data: constants, state, initial conditions,
and a numpy reference time step (no numba).

The model is the NCAR ``shallow`` code (Sadourny 1975 potential-enstrophy
scheme on an Arakawa C grid) as restructured by paper 003 (Osprey et al.,
HPCS 2014, Listing 1 and Table I): an M x N periodic domain held in
(M+1) x (N+1) arrays with one halo row and column, 13 arrays, ten update
loops, seven periodic boundary updates and three copies per time step.

Indices follow the Fortran original shifted by one (Fortran ``U(I+1,J)`` is
``u[i + 1, j]`` here with i, j from 0) and the arrays are column-major, as
in Fortran, so ``i`` is the contiguous index.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ...arrays import aligned_empty


@dataclass(frozen=True)
class ShallowConstants:
    """The original model's defaults (``DT=90., DX=DY=1.E5, A=1.E6, ALPHA=.001``)."""

    dt: float = 90.0
    dx: float = 1.0e5
    dy: float = 1.0e5
    a: float = 1.0e6
    alpha: float = 0.001


DEFAULTS = ShallowConstants()


class ShallowState(NamedTuple):
    """The 13 arrays of the model (paper 003 eq. 9 counts all of them)."""

    u: np.ndarray
    v: np.ndarray
    p: np.ndarray
    unew: np.ndarray
    vnew: np.ndarray
    pnew: np.ndarray
    uold: np.ndarray
    vold: np.ndarray
    pold: np.ndarray
    cu: np.ndarray
    cv: np.ndarray
    z: np.ndarray
    h: np.ndarray


class StepConstants(NamedTuple):
    """Per-step scalars in the working precision (the Fortran ``TDTS8`` etc.).

    The first step is a forward step (``TDT = DT``) that does no time
    filtering: ``UOLD = U`` is the Robert-Asselin filter with ``alpha = 0``.
    Later steps are leapfrog (``TDT = 2 DT``) with the filter.
    """

    fsdx: float
    fsdy: float
    tdts8: float
    tdtsdx: float
    tdtsdy: float
    alpha: float


def step_constants(precision: str, first: bool, c: ShallowConstants = DEFAULTS) -> StepConstants:
    tdt = c.dt if first else 2.0 * c.dt
    real = np.dtype(precision).type
    return StepConstants(
        fsdx=real(4.0 / c.dx),
        fsdy=real(4.0 / c.dy),
        tdts8=real(tdt / 8.0),
        tdtsdx=real(tdt / c.dx),
        tdtsdy=real(tdt / c.dy),
        alpha=real(0.0 if first else c.alpha),
    )


# Offsets of each staggered field's inner M x N points in its (M+1) x (N+1) array:
# u and cu live at (i+1, j), v and cv at (i, j+1), z at (i+1, j+1), p and h at (i, j).
STAGGER: dict[str, tuple[int, int]] = {
    "u": (1, 0),
    "cu": (1, 0),
    "unew": (1, 0),
    "v": (0, 1),
    "cv": (0, 1),
    "vnew": (0, 1),
    "z": (1, 1),
    "p": (0, 0),
    "h": (0, 0),
    "pnew": (0, 0),
}


def halo(offset: int, extent: int) -> tuple[int, int]:
    """(halo index, index it copies from) along one axis of a periodic field.

    A field whose inner points start at 1 has its halo at 0, a copy of
    ``extent``; one starting at 0 has its halo at ``extent``, a copy of 0.
    """
    return (0, extent) if offset == 1 else (extent, 0)


def periodic(a: np.ndarray, offset: tuple[int, int]) -> None:
    """Periodic continuation of one field (Fortran loops 110/115, 210/215)."""
    hi, si = halo(offset[0], a.shape[0] - 1)
    hj, sj = halo(offset[1], a.shape[1] - 1)
    a[hi, :] = a[si, :]
    a[:, hj] = a[:, sj]


def initial_state(
    shape: tuple[int, int], precision: str, c: ShallowConstants = DEFAULTS
) -> ShallowState:
    """The original initial conditions: stream function psi and pressure p.

    psi(i,j) = a sin((i+1/2) di) sin((j+1/2) dj), p(i,j) = pcf (cos 2i di + cos 2j dj) + 50000,
    u = -d(psi)/dy, v = d(psi)/dx (non-divergent), made periodic; the old
    fields start equal to the current ones.
    """
    m, n = shape
    di, dj = 2.0 * math.pi / m, 2.0 * math.pi / n
    el = n * c.dx
    pcf = math.pi**2 * c.a**2 / el**2
    i = np.arange(m + 1)[:, None]
    j = np.arange(n + 1)[None, :]
    psi = c.a * np.sin((i + 0.5) * di) * np.sin((j + 0.5) * dj)
    fields = {
        name: aligned_empty((m + 1, n + 1), precision, order="F") for name in ShallowState._fields
    }
    for name in ("unew", "vnew", "pnew", "cu", "cv", "z", "h"):
        fields[name][...] = 0.0
    fields["p"][...] = pcf * (np.cos(2.0 * i * di) + np.cos(2.0 * j * dj)) + 50000.0
    fields["u"][1:, :-1] = -(psi[1:, 1:] - psi[1:, :-1]) / c.dy
    fields["v"][:-1, 1:] = (psi[1:, 1:] - psi[:-1, 1:]) / c.dx
    periodic(fields["u"], STAGGER["u"])
    periodic(fields["v"], STAGGER["v"])
    for cur in "uvp":
        fields[f"{cur}old"][...] = fields[cur]
    return ShallowState(**fields)


def mass(s: ShallowState) -> float:
    """Sum of p over the M x N inner points: the scheme conserves it exactly.

    pnew - pold is a flux divergence that sums to zero on the periodic
    domain, and the Robert-Asselin filter is a linear combination of time
    levels whose sums are equal, so the sum is constant up to round-off.
    """
    return float(np.sum(s.p[:-1, :-1], dtype=np.float64))


def reference_step(s: ShallowState, c: StepConstants) -> None:
    """One time step with whole-array numpy slices, in the order of the model."""
    u, v, p = s.u, s.v, s.p
    s.cu[1:, :-1] = 0.5 * (p[1:, :-1] + p[:-1, :-1]) * u[1:, :-1]
    s.cv[:-1, 1:] = 0.5 * (p[:-1, 1:] + p[:-1, :-1]) * v[:-1, 1:]
    s.z[1:, 1:] = (c.fsdx * (v[1:, 1:] - v[:-1, 1:]) - c.fsdy * (u[1:, 1:] - u[1:, :-1])) / (
        p[:-1, :-1] + p[1:, :-1] + p[1:, 1:] + p[:-1, 1:]
    )
    s.h[:-1, :-1] = p[:-1, :-1] + 0.25 * (
        u[1:, :-1] * u[1:, :-1]
        + u[:-1, :-1] * u[:-1, :-1]
        + v[:-1, 1:] * v[:-1, 1:]
        + v[:-1, :-1] * v[:-1, :-1]
    )
    for name in ("cu", "cv", "z", "h"):
        periodic(getattr(s, name), STAGGER[name])
    cu, cv, z, h = s.cu, s.cv, s.z, s.h
    s.unew[1:, :-1] = (
        s.uold[1:, :-1]
        + c.tdts8
        * (z[1:, 1:] + z[1:, :-1])
        * (cv[1:, 1:] + cv[:-1, 1:] + cv[:-1, :-1] + cv[1:, :-1])
        - c.tdtsdx * (h[1:, :-1] - h[:-1, :-1])
    )
    s.vnew[:-1, 1:] = (
        s.vold[:-1, 1:]
        - c.tdts8
        * (z[1:, 1:] + z[:-1, 1:])
        * (cu[1:, 1:] + cu[:-1, 1:] + cu[:-1, :-1] + cu[1:, :-1])
        - c.tdtsdy * (h[:-1, 1:] - h[:-1, :-1])
    )
    s.pnew[:-1, :-1] = (
        s.pold[:-1, :-1]
        - c.tdtsdx * (cu[1:, :-1] - cu[:-1, :-1])
        - c.tdtsdy * (cv[:-1, 1:] - cv[:-1, :-1])
    )
    for name in ("unew", "vnew", "pnew"):
        periodic(getattr(s, name), STAGGER[name])
    for old, cur, new in ((s.uold, u, s.unew), (s.vold, v, s.vnew), (s.pold, p, s.pnew)):
        old[...] = cur + c.alpha * (new - 2 * cur + old)
    for cur, new in ((u, s.unew), (v, s.vnew), (p, s.pnew)):
        cur[...] = new


def reference_run(shape: tuple[int, int], precision: str, steps: int) -> ShallowState:
    """The model's state after ``steps`` time steps from the initial conditions."""
    s = initial_state(shape, precision)
    for n in range(steps):
        reference_step(s, step_constants(precision, first=n == 0))
    return s
