"""Calibration near one target grid: fresh curve points on both sides of its blocks.

Why: on a shared host the curves drift with the other tenants.  Measured here
(2-core EPYC KVM guest, last-level cache and memory shared with other VMs;
``benchmarks/app_validation.py``): predicting real runs from curves taken
10-20 minutes before, every loop of a case was off by about the same amount
-- all twelve loops of the 400x400 single-rank run +18..+32 %, of the
1606x1606 single-rank run -7..-27 %, of the 2-rank 1606x1606 runs -25..-42 %.
Loops that move together are not a per-loop model error: the machine had
changed.  (Runs a few seconds apart also spread, by a few percent in a quiet
hour and by +-15 % in a noisy one; no calibration removes that part.)

So, right before a prediction is used for (or checked against) a run, ``benchdb
app calibrate --near GRID`` re-measures only what that run's prediction rests
on: the single-process and the populated (``--ranks`` busy) shallow curves at
two blocks whose footprints are :data:`NEAR_FACTOR` smaller and larger than each
rank count's local block and whose rows are as long as its rows (see
:func:`_bracket`), and the model's exchanges on square global grids on both
sides of GRID.  It does not add the block or the grid itself: the lookup still
interpolates, now between points minutes old.  The points join the curves like
any other pass of the same environment and, having the block's rows, carry the
interpolation at the target (:mod:`benchdb.predict.same_rows`).  About a
minute here.

Points of the full calibration that lie *between* the two bracketing footprints
are measured again too.  Measured (``benchmarks/app_validation.py --near``): the
sweep's sizes and the validation's grids both derive from the cache sizes, so
the full sweep had measured 1606x1606 itself, 401x401 next to the 400x400 grid
and 1135x1135 at the 2-rank 1606x1606 block's footprint (128.0 against 128.2
MiB).  Being nearer than the fresh points, those half-hour-old points carried
the lookup, and the prediction followed the host of half an hour before:
-22 % for 400x400 on 1 rank and +13/+17 % for 1606x1606 on 2 ranks, off the
same way in two or three of three rounds.  A re-measured point pools its old and its fresh samples
(the lookup's median over runs), so each round moves it further to the present.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, select

from benchdb.app.decomposition import decompositions
from benchdb.app.model import AppCase, populated_context
from benchdb.db.engine import Database
from benchdb.db.models import Environment, Kernel, Machine, Measurement, Run
from benchdb.errors import UserError
from benchdb.query import shape_key

from ...kernels.geometry import SHALLOW
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
    interpolate across rates the block does not have.  Measured with ``benchdb app
    calibrate --ranks 2 --sizes ...`` (2-core EPYC, two runs), the loops summed per
    point: 70x70 ran 10-12 % slower than the squares 67x67 and 73x73 but only 2-6 %
    slower than 70x64 and 70x76; the sweep's 4:1 rectangles had 20x82's copy and vnew
    17-52 % slower than 82x20's, while 35x70 ran at 70x35's speed summed over the loops.
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


def _shallow_points(ctx: Context, *columns: Any) -> Select:
    """``columns`` of this machine's and environment's shallow measurements."""
    return (
        select(*columns)
        .join(Run, Run.id == Measurement.run_id)
        .join(Machine, Machine.id == Run.machine_id)
        .join(Environment, Environment.id == Run.environment_id)
        .join(Kernel, Kernel.id == Measurement.kernel_id)
        .where(
            Machine.fingerprint == ctx.machine.fingerprint,
            Environment.fingerprint == ctx.environment.fingerprint,
            Kernel.name.like("shallow.%"),
        )
        .distinct()
    )


def check_full_calibration(db: Database, ctx: Context, ranks: int) -> None:
    """UserError unless this machine and environment hold the shallow curves of one
    and of ``ranks`` busy processes: fresh points must join the curves they refresh,
    and the lookup reads one environment (a code or library change starts a new one)."""
    wanted = {populated_context(1), populated_context(ranks)}
    stmt = _shallow_points(ctx, Run.id, Measurement.context).where(Measurement.context.in_(wanted))
    with db.session() as s:
        found = {c for run_id, c in s.execute(stmt) if NEAR_TAG not in s.get(Run, run_id).tags}
    missing = wanted - found
    if missing:
        raise UserError(
            f"--near refreshes a full calibration, and this machine and environment "
            f"(benchdb {ctx.environment.git_commit or ctx.environment.benchdb_version}) have "
            f"no shallow curves in context {', '.join(sorted(missing))}; run `benchdb collect "
            f"--kernels shallow` and `benchdb app calibrate --ranks {ranks}` first"
        )


def with_points_between(
    db: Database,
    ctx: Context,
    context: str,
    brackets: tuple[tuple[int, int], ...],
    precision: str = "float64",
) -> tuple[tuple[int, int], ...]:
    """``brackets`` and every shape already measured in ``context`` whose footprint lies
    between the smallest and the largest of theirs: nearer to the target than the fresh
    brackets, such a point would carry the lookup with its old samples."""
    footprints = [SHALLOW.footprint_bytes(b, precision) for b in brackets]
    stmt = _shallow_points(ctx, Measurement.shape).where(
        Measurement.context == context,
        Measurement.precision == precision,
        Measurement.footprint_bytes.between(min(footprints), max(footprints)),
    )
    with db.session() as s:
        inside = {(int(a), int(b)) for a, b in s.scalars(stmt)}
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
    single = plan.sizes_spec(with_points_between(db, ctx, populated_context(1), plan.single))
    say(f"1 process: shallow at {single}")
    sweep = build_plan(ctx.machine, kernels=["shallow"], sizes_spec=single)
    result = run_sweep(db, sweep, tags=[NEAR_TAG], context=ctx)
    populated = plan.sizes_spec(
        with_points_between(db, ctx, populated_context(plan.ranks), plan.populated)
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
