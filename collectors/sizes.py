"""Problem sizes chosen from this machine's caches.

Paper 003 (Osprey et al., HPCS 2014, section V) benchmarked 23 square sizes
from 1x1 to 600x600 and looked performance up by memory footprint (eq. 8-9):
what matters is where the footprint sits relative to each cache capacity.
So sizes are chosen as *footprints* first -- geometric spacing from
L1-resident to beyond the last-level cache, plus points around every cache
capacity (Kerncraft measures at 0.66x each cache and 15x the last level) --
and each footprint is turned into a shape of each benchmark by inverting the
benchmark's own footprint function numerically (for shallow,
(M+1)(N+1) x 13 arrays x 8 bytes), never by a hard-coded formula.

Cache sizes come from :func:`benchdb.machine.detect_machine` (sysfs), never
from constants.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from benchdb.errors import UserError
from benchdb.machine import MachineInfo, parse_size
from benchdb.query import parse_shape

from ..kernels.api import Benchmark, Shape

# Where the sweep starts and ends, relative to the caches.
START_FRACTION_OF_L1 = 1 / 8
KERNCRAFT_DEEP_MULTIPLE = 15  # Kerncraft's "well in memory" point
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
    """How densely the footprint axis is sampled.

    ``per_octave`` geometric points per doubling of footprint, up to
    ``end_multiple`` x the last-level cache; ``cache_factors`` extra points at
    these multiples of every data cache's capacity; ``deep_multiple`` an extra
    point at this multiple of the last level (or None).  ``aspect_every``: at
    every k-th footprint (0: none) a multi-dimensional benchmark is also
    measured in rectangles of the same footprint, with rows each of
    :data:`ASPECT_FACTORS` times longer and shorter than the square's, from
    which the predictor learns how row length changes the rate.
    """

    per_octave: float
    end_multiple: float
    cache_factors: tuple[float, ...]
    deep_multiple: float | None
    aspect_every: int = 0


# The full sweep: two points per doubling to 8x the LLC, Kerncraft's 0.66x and
# 15x points, and the capacities themselves and 1.5x them.
DEFAULT_DENSITY = SweepDensity(
    per_octave=2.0,
    end_multiple=8,
    cache_factors=(0.66, 1.0, 1.5),
    deep_multiple=KERNCRAFT_DEEP_MULTIPLE,
    aspect_every=2,
)
# A first look: one point per factor of 8, half of each cache, DRAM at 4x the LLC.
QUICK_DENSITY = SweepDensity(
    per_octave=1 / 3, end_multiple=4, cache_factors=(0.5,), deep_multiple=None
)

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


def parse_list(text: str) -> list[str]:
    """'a, b,,c' -> ['a', 'b', 'c']."""
    return [part.strip() for part in text.split(",") if part.strip()]


def footprint_targets(machine: MachineInfo, density: SweepDensity, memory_limit: int) -> list[int]:
    """Footprints (bytes) to measure on ``machine``, ascending.

    Geometric from 1/8 of L1 to exactly ``density.end_multiple`` x the
    last-level cache (steps of at most ``2 ** (1 / per_octave)``), plus
    ``density.cache_factors`` x each data cache and the deep point, capped at
    ``AUTO_MEMORY_SHARE`` of ``memory_limit``.  Targets closer than a quarter
    of the geometric step are merged (the cache points win).
    """
    caches = machine.data_caches()
    if not caches:
        raise UserError(
            "cannot read this machine's cache sizes (no sysfs cache folder, no lscpu); "
            "give sizes explicitly with --sizes 100x100,... or --footprints 1MiB,64MiB"
        )
    lo = caches[0].size_bytes * START_FRACTION_OF_L1
    llc = caches[-1].size_bytes
    hi = llc * density.end_multiple
    ratio = 2.0 ** (1.0 / density.per_octave)
    geometric = np.geomspace(lo, hi, math.ceil(math.log(hi / lo, ratio)) + 1)
    special = [c.size_bytes * f for c in caches for f in density.cache_factors]
    if density.deep_multiple:
        special.append(llc * density.deep_multiple)
    cap = memory_limit * AUTO_MEMORY_SHARE
    merge = math.log(ratio) / 4
    chosen = sorted(special)
    for g in geometric:
        if all(abs(math.log(g / s)) > merge for s in chosen):
            chosen.append(g)
    return sorted(int(t) for t in chosen if t <= cap)


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
    bench: Benchmark, targets: Iterable[int], precision: str, aspect_every: int = 0
) -> list[Shape]:
    """Distinct shapes for ``targets``, in ascending footprint order, with the
    calibration rectangles at every ``aspect_every``-th square (0: none)."""
    shapes: list[Shape] = []
    squares = 0
    for t in sorted(targets):
        shape = shape_for_footprint(bench, t, precision)
        if shape in shapes:
            continue
        shapes.append(shape)
        if aspect_every and squares % aspect_every == aspect_every - 1:
            shapes.extend(s for s in aspect_shapes(bench, shape) if s not in shapes)
        squares += 1
    return shapes


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
