"""Problem sizes chosen from this machine's caches.

Paper 003 (Osprey et al., HPCS 2014, section V) benchmarked 23 square sizes
from 1x1 to 600x600 and looked performance up by memory footprint (eq. 8-9):
what matters is where the footprint sits relative to each cache capacity.
So sizes are chosen as *footprints* first -- geometric spacing from
L1-resident to the last-level cache, plus points around every cache capacity
(Kerncraft measures at 0.66x each cache), then a few on the memory plateau
beyond it, where the rate no longer changes (docs/design.md, "The sweep's
plan") -- and each footprint is turned into a shape of each benchmark by inverting the
benchmark's own footprint function numerically (for shallow,
(M+1)(N+1) x 13 arrays x 8 bytes), never by a hard-coded formula.

Cache sizes come from :func:`benchdb.machine.detect_machine` (sysfs) or are
described (``collect --caches``), never from constants.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum

import numpy as np

from benchdb.errors import UserError
from benchdb.machine import CacheLevel, MachineInfo, parse_size
from benchdb.shapes import parse_shape

from ..kernels.api import Benchmark, Shape

# Where the sweep starts and ends, relative to the caches.
START_FRACTION_OF_L1 = 1 / 8
# The largest automatic footprint, whatever the caches: beyond a few times the
# last-level cache the rate is flat (the DRAM plateau), and a 1 GiB cache must not
# make the sweep allocate tens of GiB and spend seconds on every sample.
MAX_AUTO_FOOTPRINT = 4 * 2**30
# The tridiagonal batch grows in columns at a fixed depth: ocean columns have
# O(100) levels (paper 004 section 10.1); a 3000-level column is not a workload.
FIXED_EXTENTS: dict[str, dict[int, int]] = {"tridiag": {1: 100}}
# Automatic sizes never ask for more than this share of the available memory.
AUTO_MEMORY_SHARE = 0.5
# The calibration rectangles' rows are these many times longer / shorter than the
# square's: the row length moves a loop's rate, either way (on a small block
# shorter rows are slower; on a large one they keep the previous rows in L1,
# Kerncraft's layer condition: docs/findings/collection.md), and unevenly with
# the aspect, so the correction is measured out to extents 64:1 apart
# (docs/findings/prediction-accuracy.md).
ASPECT_FACTORS = (2, 4, 8)
# A rectangle whose extents, rounded to integers, move its log aspect further than
# this from ln(factor), or its log footprint from the square's, is not measured: on a
# tiny block it would be another aspect and size.
ROUNDING_TOL = 0.1


@dataclass(frozen=True)
class SweepDensity:
    """How densely the footprint axis is sampled (docs/design.md, "The sweep's plan").

    ``per_octave`` geometric points per doubling of footprint up to the last-level
    cache, ``dram_per_octave`` beyond it, up to ``end_multiple`` x the last level
    (at most :data:`MAX_AUTO_FOOTPRINT`); ``cache_factors`` extra points at these
    multiples of every data cache's capacity.  Calibration rectangles (rows each of
    :data:`ASPECT_FACTORS` times longer and shorter than the square's, from which
    the predictor learns how row length changes the rate) go with every
    ``aspect_every``-th square within the private caches and every
    ``aspect_every_shared``-th in the last level (0: none); none beyond it, where
    the row length moved the rate less than measuring again did
    (docs/findings/sweep-plan.md).  Every ``coarse_every``-th square, each capacity
    and the largest form the coarse round, measured first.
    """

    per_octave: float
    end_multiple: float
    cache_factors: tuple[float, ...]
    dram_per_octave: float = 1.0
    aspect_every: int = 0
    aspect_every_shared: int = 0
    coarse_every: int = 4


# The full sweep: two points per doubling through the caches, one beyond, to 3x the
# LLC; Kerncraft's 0.66x points, the capacities themselves and 1.5x them.
DEFAULT_DENSITY = SweepDensity(
    per_octave=2.0,
    end_multiple=3,
    cache_factors=(0.66, 1.0, 1.5),
    aspect_every=2,
    aspect_every_shared=4,
)
# A first look: one point per factor of 8, half of each cache, DRAM at 4x the LLC.
QUICK_DENSITY = SweepDensity(
    per_octave=1 / 3, end_multiple=4, cache_factors=(0.5,), dram_per_octave=1 / 3
)


class Round(IntEnum):
    """When a planned shape is measured: the coarse squares over every level first, so
    that a sweep stopped by its time budget has a usable curve, then the squares between
    them, then the calibration rectangles."""

    COARSE = 0
    DENSE = 1
    RECTANGLES = 2


@dataclass(frozen=True)
class Target:
    """One footprint of a sweep (bytes), its round, and whether its square gets rectangles."""

    footprint: int
    round: Round = Round.COARSE
    rectangles: bool = False


@dataclass(frozen=True)
class PlannedShape:
    shape: Shape
    round: Round


_FOOTPRINT_RE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]i?B?|B)?\s*", re.IGNORECASE)


def parse_footprint(text: str) -> int:
    """'64MiB' / '512KiB' / '1GiB' / '4096' -> bytes (powers of 1024); UserError otherwise."""
    m = _FOOTPRINT_RE.fullmatch(text)
    value = parse_size(text) if m else 0
    if not m or value <= 0:
        raise UserError(
            f"footprint {text!r} is not a positive size; write it like 512KiB, 64MiB or 1GiB"
        )
    return value


def parse_caches(text: str) -> list[int]:
    """'48KiB,2MiB,1GiB' -> data cache sizes in bytes, smallest level first; UserError
    unless one to four sizes, each larger than the one before."""
    try:
        found = [parse_footprint(part) for part in parse_list(text)]
    except UserError as exc:
        raise UserError(f"--caches: {exc}") from None
    if not 1 <= len(found) <= 4 or any(b <= a for a, b in itertools.pairwise(found)):
        raise UserError(
            f"--caches {text!r}: give one to four data cache sizes, smallest level first, "
            "each larger than the last, e.g. --caches 48KiB,2MiB,1GiB"
        )
    return found


def parse_list(text: str) -> list[str]:
    """'a, b,,c' -> ['a', 'b', 'c']."""
    return [part.strip() for part in text.split(",") if part.strip()]


def _geometric(lo: float, hi: float, per_octave: float) -> np.ndarray:
    """From ``lo`` to exactly ``hi``, steps of at most ``2 ** (1 / per_octave)``."""
    if hi <= lo:
        return np.array([hi])
    ratio = 2.0 ** (1.0 / per_octave)
    return np.geomspace(lo, hi, math.ceil(math.log(hi / lo, ratio)) + 1)


def footprint_targets(
    machine: MachineInfo, density: SweepDensity, memory_limit: int
) -> list[Target]:
    """The footprints to measure on ``machine``, ascending, each with its round and
    whether its square gets rectangles.

    Geometric from 1/8 of L1 to the last-level cache at ``density.per_octave``, then
    at ``density.dram_per_octave`` to ``density.end_multiple`` x it, plus
    ``density.cache_factors`` x each data cache, capped at :data:`MAX_AUTO_FOOTPRINT`
    and at ``AUTO_MEMORY_SHARE`` of ``memory_limit``.  Targets closer than a quarter
    of the geometric step are merged (the cache points win).
    """
    caches = machine.data_caches()
    if not caches:
        raise UserError(
            "cannot read this machine's cache sizes (no sysfs cache folder, no lscpu); "
            "give sizes explicitly with --sizes 100x100,... or --footprints 1MiB,64MiB, "
            "or describe them with --caches 48KiB,2MiB,32MiB"
        )
    llc = caches[-1].size_bytes
    cap = min(memory_limit * AUTO_MEMORY_SHARE, MAX_AUTO_FOOTPRINT)
    cached = _geometric(caches[0].size_bytes * START_FRACTION_OF_L1, llc, density.per_octave)
    beyond = _geometric(llc, llc * density.end_multiple, density.dram_per_octave)[1:]
    special = sorted(c.size_bytes * f for c in caches for f in density.cache_factors)
    chosen = list(special)
    for g, spacing in [
        *((g, density.per_octave) for g in cached),
        *((g, density.dram_per_octave) for g in beyond),
    ]:
        merge = math.log(2.0) / spacing / 4
        if all(abs(math.log(g / s)) > merge for s in chosen):
            chosen.append(g)
    footprints = sorted(int(t) for t in chosen if t <= cap)
    return _rounds(footprints, caches, density)


def _rounds(
    footprints: list[int], caches: Sequence[CacheLevel], density: SweepDensity
) -> list[Target]:
    """Each footprint's round and rectangles (see :class:`SweepDensity`)."""
    llc = caches[-1].size_bytes
    capacities = {c.size_bytes for c in caches}
    private = caches[-2].size_bytes * max(density.cache_factors) if len(caches) > 1 else 0
    out: list[Target] = []
    counts = {"private": 0, "shared": 0}
    for i, t in enumerate(footprints):
        coarse = i % density.coarse_every == 0 or t in capacities or i == len(footprints) - 1
        if t <= private:
            region, every = "private", density.aspect_every
        else:
            region, every = "shared", density.aspect_every_shared
        rects = bool(every) and t <= llc and counts[region] % every == every - 1
        counts[region] += 1
        out.append(Target(t, Round.COARSE if coarse else Round.DENSE, rects))
    return out


def _scaled_shape(bench: Benchmark, n: int) -> Shape:
    fixed = FIXED_EXTENTS.get(bench.name, {})
    return tuple(fixed.get(axis, n) for axis in range(bench.ndim))


def _footprint(bench: Benchmark, shape: Shape, precision: str) -> int | None:
    """The footprint, or None where the benchmark refuses the shape (too small)."""
    try:
        return bench.footprint_bytes(shape, precision)
    except ValueError:
        return None


def shape_for_footprint(bench: Benchmark, target: int, precision: str) -> Shape:
    """The square (scaled extents equal) shape whose footprint is nearest ``target`` in log.

    The footprint grows monotonically with the extent, so an exponential
    search brackets the target and bisection finds it; the smallest valid
    shape is returned for a target below it.
    """
    n_min = 1
    while _footprint(bench, _scaled_shape(bench, n_min), precision) is None:
        n_min += 1
        if n_min > 64:
            raise ValueError(f"{bench.name}: no valid square shape up to extent 64")

    def fp(n: int) -> int:
        return _footprint(bench, _scaled_shape(bench, n), precision) or 0

    if fp(n_min) >= target:
        return _scaled_shape(bench, n_min)
    hi = n_min * 2
    while fp(hi) < target:
        hi *= 2
    lo = hi // 2 if hi // 2 >= n_min else n_min
    while hi - lo > 1:  # invariant: fp(lo) < target <= fp(hi)
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fp(mid) < target else (lo, mid)
    best = min((lo, hi), key=lambda n: abs(math.log(fp(n) / target)))
    return _scaled_shape(bench, best)


def row_shape(bench: Benchmark, square: Shape, factor: float) -> Shape | None:
    """``square`` with rows ``factor`` times as long: the contiguous axis scaled by
    ``factor``, the first other axis by its inverse, so the footprint stays put
    (``factor`` < 1: shorter rows).  None for a benchmark whose aspect means
    nothing, a shape too small to scale so, or one whose rounding moves its aspect
    or footprint more than :data:`ROUNDING_TOL` (in log) from the intended."""
    axis = bench.geometry.contiguous_axis
    if axis is None or bench.name in FIXED_EXTENTS:
        return None
    axis %= bench.ndim
    other = next(d for d in range(bench.ndim) if d != axis)
    longer, shorter, f = (axis, other, factor) if factor >= 1 else (other, axis, 1 / factor)
    shape = list(square)
    shape[longer] = round(shape[longer] * f)
    shape[shorter] = int(shape[shorter] / f)
    fp = _footprint(bench, tuple(shape), "float64") if min(shape) >= 1 else None
    if fp is None:
        return None
    # the log aspect moves by half the change of ln(row / other extent)
    ratio = math.log(shape[axis] / shape[other]) - math.log(square[axis] / square[other])
    moved = math.log(fp / (_footprint(bench, tuple(square), "float64") or fp))
    if max(abs(ratio / 2 - math.log(factor)), abs(moved)) > ROUNDING_TOL:
        return None
    return tuple(shape)


def aspect_shapes(bench: Benchmark, square: Shape) -> list[Shape]:
    """The calibration rectangles of ``square``'s footprint (see :class:`SweepDensity`):
    rows each of :data:`ASPECT_FACTORS` times longer and shorter (none where
    :func:`row_shape` has none)."""
    rects = (row_shape(bench, square, g) for f in ASPECT_FACTORS for g in (f, 1 / f))
    return [s for s in rects if s is not None]


def shapes_for_footprints(
    bench: Benchmark, targets: Iterable[Target], precision: str
) -> list[PlannedShape]:
    """Distinct shapes for ``targets`` in ascending footprint order, each with its round;
    a target's calibration rectangles (:func:`aspect_shapes`) in the rectangles' round."""
    planned: list[PlannedShape] = []
    seen: set[Shape] = set()
    for t in sorted(targets, key=lambda t: t.footprint):
        shape = shape_for_footprint(bench, t.footprint, precision)
        if shape in seen:
            continue
        seen.add(shape)
        planned.append(PlannedShape(shape, t.round))
        if t.rectangles:
            rects = [s for s in aspect_shapes(bench, shape) if s not in seen]
            seen.update(rects)
            planned.extend(PlannedShape(s, Round.RECTANGLES) for s in rects)
    return planned


def explicit_shapes(bench: Benchmark, specs: Sequence[str]) -> list[Shape]:
    """The ``--sizes`` entries that fit ``bench`` (same number of extents), validated.

    Raises UserError when none fits or one is too small for the benchmark.
    """
    shapes: list[Shape] = []
    for spec in specs:
        extents = parse_shape(spec)
        if len(extents) != bench.ndim:
            continue
        if _footprint(bench, extents, "float64") is None:
            raise UserError(
                f"size {spec!r} is too small for {bench.name}; use larger extents "
                f"(e.g. {'x'.join(['16'] * bench.ndim)})"
            )
        if extents not in shapes:
            shapes.append(extents)
    if not shapes:
        example = "x".join(["100"] * bench.ndim)
        raise UserError(
            f"--sizes has no shape with {bench.ndim} extent(s) for {bench.name}; "
            f"add one like {example}, or use --footprints"
        )
    return shapes
