"""Where refine measures: the gaps of a curve against its repeat noise (synthetic curves)."""

from __future__ import annotations

import math

import numpy as np

from benchdb.predict.lookup import prepare_lookup
from benchdb.predict.refinement import MIN_STEP, SPAN_FACTOR, gaps

from .synth import add_run, square_sizes, step_curve

KERNEL = "stencil2d5"


def lookup_of(sdb):
    return prepare_lookup(sdb, KERNEL, method="pchip", store=False)


def test_a_smooth_curve_measured_densely_has_no_gap(sdb) -> None:
    add_run(sdb, KERNEL, square_sizes(16, 2000, 24), step_curve(width=6.0), repeat=0.02)
    assert gaps(lookup_of(sdb)) == []


def test_a_sharp_cache_edge_is_bisected_where_it_bends(sdb) -> None:
    corner = 2e6
    add_run(
        sdb, KERNEL, square_sizes(16, 2000, 12), step_curve(corner=corner, width=0.5), repeat=0.01
    )
    lk = lookup_of(sdb)
    found = gaps(lk)
    assert found, "a step this sharp between half-octave points must miss by more than 2 %"
    worst = found[0]
    assert abs(worst.error_pct) / SPAN_FACTOR > worst.tolerance_pct
    assert abs(math.log(worst.footprint / corner)) < math.log(8)  # near the edge
    fps = lk.curve.footprint
    i = int(np.flatnonzero(fps == worst.footprint)[0])
    # each target halves an interval around the left-out point, in log footprint
    expected = {math.sqrt(fps[i] * fps[i - 1]), math.sqrt(fps[i] * fps[i + 1])}
    assert {t.footprint for t in worst.targets} == expected
    assert all(t.row_factor == 1.0 for t in worst.targets)
    assert sorted(found, key=lambda g: -g.excess) == found


def test_a_dip_is_named_and_refined_on_both_sides(sdb) -> None:
    sizes = square_sizes(16, 2000, 16)
    dip = sizes[9]
    add_run(sdb, KERNEL, sizes, step_curve(width=6.0), repeat=0.01, scale_at={dip: 0.6})
    found = gaps(lookup_of(sdb))
    at_dip = [g for g in found if g.shape == f"{dip[0]}x{dip[1]}"]
    assert at_dip and "dip" in at_dip[0].flags and "is a dip" in at_dip[0].reason
    assert at_dip[0].error_pct < -30
    below, above = sorted(t.footprint for t in at_dip[0].targets)
    assert below < at_dip[0].footprint < above


def test_spans_narrower_than_the_smallest_step_are_not_bisected(sdb) -> None:
    sides = [100, 103, 106, 109, 112]  # footprints ~6 % apart: below MIN_STEP ** 2
    assert MIN_STEP**2 > (106 / 103) ** 2
    add_run(
        sdb, KERNEL, [(s, s) for s in sides], step_curve(), repeat=0.01, scale_at={(106, 106): 0.5}
    )
    found = gaps(lookup_of(sdb))
    assert any(g.shape == "106x106" for g in found)
    assert all(g.targets == () for g in found)


def test_a_rectangle_the_correction_misses_bisects_along_footprint_and_row_length(sdb) -> None:
    squares = square_sizes(32, 1024, 11)
    rects = [(2 * n, n // 2) for n, _ in squares[1::2]]  # rows twice as long
    odd = rects[2]
    add_run(
        sdb, KERNEL, [*squares, *rects], step_curve(width=6.0), repeat=0.01, scale_at={odd: 0.6}
    )
    lk = lookup_of(sdb)
    found = [g for g in gaps(lk) if g.shape == f"{odd[0]}x{odd[1]}"]
    assert found and abs(found[0].log_aspect) > 0.5
    a = found[0].log_aspect
    same = [t for t in found[0].targets if math.isclose(t.row_factor, math.exp(a))]
    half = [t for t in found[0].targets if math.isclose(t.row_factor, math.exp(a / 2))]
    # the same aspect at the neighbouring square footprints, half of it at its own
    assert len(same) == 2 and len(half) == 1 and len(found[0].targets) == 3
    assert (
        sorted(t.footprint for t in same)[0]
        < found[0].footprint
        < sorted(t.footprint for t in same)[1]
    )
    assert half[0].footprint == found[0].footprint
