"""Padding advice: a shape that sits on a measured dip, and nearby shapes predicted faster.

Paper 003 (Osprey et al., HPCS 2014, §V) saw "pathological peaks and troughs"
in its measured curves from cache thrashing: a grid whose rows map onto the
same cache sets runs well slower than its neighbours a few points larger or
smaller.  Padding a leading dimension is the classic fix.  An analytic model
such as Kerncraft needs a cache simulator to predict such a dip; benchdb has
measured it (:mod:`.curve` flags it ``dip``), so it can also say which padded
shapes the measurements put clear of it.

How: where the answer at the query ``S`` rests on a measured point flagged
``dip``, those points are taken out (:meth:`.lookup.Lookup.without` refits every
layer as if they had never been measured) and every shape ``S + p``,
``p in {0..pad}^ndim``, ``p != 0``, is predicted from what remains -- the
smooth curve the dip broke.  ``S`` itself is predicted with the dip in: that is
what ``S`` measures.  A candidate's time counts the work of its extra points
too, so one predicted faster wins even where the padding is computed; the
candidates with the least padding come first.  A prediction is not a
measurement: ``benchdb advise --measure`` times ``S`` and the candidates
interleaved, so the ranking can be checked on the spot.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from ..errors import UserError
from ..shapes import shape_key
from .lookup import Lookup

DIP = "dip"


@dataclass(frozen=True)
class QueryAnswer:
    """The queried shape's answer from the full lookup (its dip included)."""

    shape: tuple[int, ...]
    time_s: float
    layer: str
    flags: str  # the bracketing measured points' flags, comma-joined

    @property
    def key(self) -> str:
        return shape_key(self.shape)


@dataclass(frozen=True)
class Candidate:
    """A padded shape predicted without the dip, and faster than the query."""

    shape: tuple[int, ...]
    padding: tuple[int, ...]  # added to each extent of the query
    time_s: float
    ratio: float  # time_s / the query's predicted time (below 1: faster)
    layer: str
    flags: str

    @property
    def key(self) -> str:
        return shape_key(self.shape)


@dataclass(frozen=True)
class Advice:
    """What :func:`advise` found; ``dips`` empty means the query is near no dip and
    there are no candidates."""

    kernel: str
    query: QueryAnswer
    dips: tuple[str, ...]  # shape keys of the flagged points the query's answer rests on
    pad: int
    considered: int  # padded shapes predicted (0 where no dip)
    faster: int  # of those, how many are predicted faster than the query
    candidates: tuple[Candidate, ...]  # the first ``top`` of the faster ones, ranked

    @property
    def near_dip(self) -> bool:
        return bool(self.dips)


def paddings(ndim: int, pad: int) -> np.ndarray:
    """Every ``p in {0..pad}^ndim`` except zero, as rows (n, ndim)."""
    grid = np.array(list(itertools.product(range(pad + 1), repeat=ndim)), dtype=np.int64)
    return grid[grid.any(axis=1)]


def dip_shapes(lookup: Lookup, lo_footprint: float, hi_footprint: float) -> tuple[str, ...]:
    """Shape keys of the curve's ``dip`` points at the footprints an answer rests on.

    The answer names its bracketing footprints in either layer (the square curve,
    or same-row blocks, whose points keep the flags they earned on the curve), so
    matching footprints finds the curve points in both."""
    curve = lookup.curve
    at = np.isin(curve.footprint, [lo_footprint, hi_footprint])
    return tuple(
        sorted(
            {key for i in np.flatnonzero(at) if DIP in curve.flags[i] for key in curve.shapes[i]}
        )
    )


def advise(lookup: Lookup, shape: tuple[int, ...], *, pad: int = 8, top: int = 5) -> Advice:
    """Whether ``shape`` sits near a measured dip of ``lookup``'s curve, and if so the
    ``top`` padded shapes (each extent ``+0..pad``) predicted faster without it,
    least padding first, then fastest."""
    if pad < 1 or top < 1:
        raise UserError(f"pad ({pad}) and top ({top}) must be at least 1")
    full = lookup.evaluate(np.array([shape], dtype=np.int64))
    query = QueryAnswer(
        tuple(int(v) for v in shape),
        float(full.time_s[0]),
        str(full.layer[0]),
        str(full.point_flags[0]),
    )
    dips = (
        dip_shapes(lookup, float(full.lo_footprint_bytes[0]), float(full.hi_footprint_bytes[0]))
        if DIP in query.flags.split(",")
        else ()
    )
    if not dips:
        return Advice(lookup.selection.kernel, query, (), pad, 0, 0, ())
    removed = sum(1 for keys in lookup.curve.shapes if set(keys) <= set(dips))
    if len(lookup.curve) - removed < lookup.method.min_points:
        raise UserError(
            f"without its dip points {lookup.selection.kernel} keeps too few measured "
            f"footprints for method {lookup.method.name}; collect more sizes or use --method linear"
        )
    clean = lookup.without(set(dips))
    pads = paddings(len(shape), pad)
    shapes = np.asarray(shape, dtype=np.int64) + pads
    keep = np.array([shape_key(s) not in dips for s in shapes], dtype=bool)
    pads, shapes = pads[keep], shapes[keep]
    answers = clean.evaluate(shapes)
    ratio = answers.time_s / query.time_s
    faster = np.flatnonzero(ratio < 1)
    order = sorted(faster, key=lambda i: (int(pads[i].sum()), float(answers.time_s[i])))
    candidates = tuple(
        Candidate(
            tuple(int(v) for v in shapes[i]),
            tuple(int(v) for v in pads[i]),
            float(answers.time_s[i]),
            float(ratio[i]),
            str(answers.layer[i]),
            str(answers.point_flags[i]),
        )
        for i in order[:top]
    )
    return Advice(lookup.selection.kernel, query, dips, pad, len(shapes), len(faster), candidates)
