"""Calibration near one target grid: fresh curve points on both sides of its blocks.

Why: on a shared host the curves drift with the other tenants: predicted from
curves taken minutes before, every loop of a run is off by about the same
amount, which is not a per-loop model error but a changed machine
(docs/findings/app-loop-curves.md, "Drift").  Runs a few seconds apart also
spread; no calibration removes that part.

So, right before a prediction is used for (or checked against) a run, ``benchdb
app calibrate --near GRID`` re-measures only what that run's prediction rests
on: the single-process and the populated (``--ranks`` busy) shallow curves at
two blocks whose footprints are :data:`NEAR_FACTOR` smaller and larger than each
rank count's local block and whose rows are as long as its rows (see
:func:`_bracket`), and the model's exchanges on square global grids on both
sides of GRID.  It does not add the block or the grid itself: the lookup still
interpolates, now between points minutes old.  The points join the curves like
any other pass of the same environment and, having the block's rows, carry the
interpolation at the target (:mod:`benchdb.predict.same_rows`).

Points of the full calibration that lie *between* the two bracketing footprints
are measured again too: the sweep's sizes and a run's grid both derive from the
cache sizes, so the full sweep may have measured the block (or a neighbour)
itself, and being nearer than the fresh points, such an old point would carry
the lookup and the prediction would follow the host as it was then
(docs/findings/app-loop-curves.md, "Old points between the brackets").  A
re-measured point pools its old and its fresh samples (the lookup's median over
runs), so each round moves it further to the present.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from benchdb.app.context import LoopContext
from benchdb.app.decomposition import decompositions
from benchdb.app.model import AppCase
from benchdb.db.engine import Database
from benchdb.db.shallow_points import shallow_contexts, shallow_shapes_between
from benchdb.errors import UserError
from benchdb.shapes import shape_key

from ...kernels.builtin.shallow import SHALLOW
from ..plan import build_plan
from ..sweep import Context, detect_context, run_sweep
from .exchanges import calibrate_exchanges, square_cases
from .populated import calibrate_populated, check_ranks

# Footprint ratio between the target block and each bracketing block (+-9 %):
# well inside the sweep's half-octave spacing, so the fresh points are the
# target's neighbours on the curve.
NEAR_FACTOR = 2**0.125
NEAR_TAG = "near-calibration"


@dataclass(frozen=True)
class NearPlan:
    """What a near calibration measures for one global grid and rank count."""

    grid: tuple[int, int]
    ranks: int
    single: tuple[tuple[int, int], ...]  # blocks around the 1-rank block
    populated: tuple[tuple[int, int], ...]  # blocks around every P-rank block
    exchanges: tuple[AppCase, ...]  # every decomposition of P, grids around GRID

    @staticmethod
    def sizes_spec(shapes: tuple[tuple[int, int], ...]) -> str:
        return ",".join(shape_key(s) for s in shapes)


def _bracket(local: tuple[int, int]) -> set[tuple[int, int]]:
    """Blocks whose footprints are NEAR_FACTOR below and above the block's, with its rows.

    The brackets keep the block's contiguous extent (its row length) and stretch the
    other one, and the lookup answers the block from them alone
    (:mod:`benchdb.predict.same_rows`).  The row length itself -- its SIMD remainder,
    whether rows start on a cache line -- moves the rate, so brackets with other rows
    interpolate across rates the block does not have
    (docs/findings/app-loop-curves.md, "Same-row brackets").
    """
    stretched = 1 - (SHALLOW.contiguous_axis or 0)
    out = set()
    # the footprint is proportional to (M+1)(N+1): scale the other extent + 1 by f
    for f in (1 / NEAR_FACTOR, NEAR_FACTOR):
        shape = list(local)
        shape[stretched] = max(2, round((local[stretched] + 1) * f) - 1)
        out.add((shape[0], shape[1]))
    return out


def near_plan(grid: tuple[int, int], ranks: int, precision: str = "float64") -> NearPlan:
    """The bracketing sizes for ``grid`` on 1 and on ``ranks`` ranks; UserError if
    no decomposition of ``ranks`` divides it."""
    decomps = decompositions(grid, ranks)
    if not decomps:
        raise UserError(
            f"no decomposition of {ranks} ranks divides the grid {shape_key(grid)}; "
            f"give a grid whose sides are multiples of {ranks}"
        )
    populated = set().union(*(_bracket(d.local_shape(grid)) for d in decomps))
    side = math.sqrt(grid[0] * grid[1])
    exchange_sides = sorted(
        {
            max(2 * ranks, ranks * round(side * f / ranks))
            for f in (NEAR_FACTOR**-0.5, NEAR_FACTOR**0.5)
        }
        - {grid[0]}
    )
    return NearPlan(
        grid,
        ranks,
        tuple(sorted(_bracket(grid))),
        tuple(sorted(populated)),
        tuple(square_cases(exchange_sides, ranks, precision)),
    )


def check_full_calibration(db: Database, ctx: Context, ranks: int) -> None:
    """UserError unless this machine and environment hold the shallow curves of one
    and of ``ranks`` busy processes: fresh points must join the curves they refresh,
    and the lookup reads one environment (a code or library change starts a new one)."""
    wanted = {LoopContext(), LoopContext(ranks)}
    found = {
        LoopContext.parse(c)
        for c in shallow_contexts(
            db,
            ctx.machine.node_class.fingerprint,
            ctx.environment.fingerprint,
            [str(c) for c in wanted],
            skip_tag=NEAR_TAG,
        )
    }
    missing = sorted(str(c) for c in wanted - found)
    if missing:
        raise UserError(
            f"--near refreshes a full calibration, and this machine and environment "
            f"(benchdb {ctx.environment.git_commit or ctx.environment.benchdb_version}) have "
            f"no shallow curves in context {', '.join(missing)}; run `benchdb collect "
            f"--kernels shallow` and `benchdb app calibrate --ranks {ranks}` first"
        )


def with_points_between(
    db: Database,
    ctx: Context,
    context: LoopContext,
    brackets: tuple[tuple[int, int], ...],
    precision: str = "float64",
) -> tuple[tuple[int, int], ...]:
    """``brackets`` and every shape already measured in ``context`` whose footprint lies
    between the smallest and the largest of theirs: nearer to the target than the fresh
    brackets, such a point would carry the lookup with its old samples."""
    footprints = [SHALLOW.footprint_bytes(b, precision) for b in brackets]
    inside = shallow_shapes_between(
        db,
        ctx.machine.node_class.fingerprint,
        ctx.environment.fingerprint,
        context=str(context),
        precision=precision,
        footprints=(min(footprints), max(footprints)),
    )
    return tuple(sorted(set(brackets) | inside))


def calibrate_near(
    db: Database,
    plan: NearPlan,
    *,
    timeout: float | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Measure ``plan``: the single-process curve points (a sweep run tagged
    :data:`NEAR_TAG`), the populated ones and the exchanges; what was stored."""
    ctx = detect_context()
    check_ranks(plan.ranks, ctx.machine.cores)
    check_full_calibration(db, ctx, plan.ranks)
    say = progress or (lambda _: None)
    single = plan.sizes_spec(with_points_between(db, ctx, LoopContext(), plan.single))
    say(f"1 process: shallow at {single}")
    sweep = build_plan(ctx.machine, kernels=["shallow"], sizes_spec=single)
    result = run_sweep(db, sweep, tags=[NEAR_TAG], context=ctx)
    populated = plan.sizes_spec(
        with_points_between(db, ctx, LoopContext(plan.ranks), plan.populated)
    )
    say(f"{plan.ranks} processes at once: shallow at {populated}")
    populated_run, stored = calibrate_populated(
        db, plan.ranks, sizes_spec=populated, timeout=timeout, tags=(NEAR_TAG,)
    )
    exchange_runs = calibrate_exchanges(
        db, list(plan.exchanges), timeout=timeout, progress=say, tags=(NEAR_TAG,)
    )
    return {
        "grid": shape_key(plan.grid),
        "ranks": plan.ranks,
        "single_run_id": result.run_id,
        "single_sizes": single,
        "populated_run_id": populated_run,
        "populated_sizes": populated,
        "populated_measurements": stored,
        "exchange_app_runs": exchange_runs,
    }
