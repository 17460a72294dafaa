"""Exchange calibration: the real model's halo exchanges timed in situ, by local footprint.

The halo model (paper 001 eq. 8-10 with the measured ``MPI_Sendrecv``)
prices the messages.  Inside the running model an exchange also packs strided
rows, copies along an axis a rank has alone, finds the MPI buffers evicted by
the loops since the last exchange, and waits for the neighbour, whose loops
took a little longer this time (noise makes some rank late at every
synchronisation, and the wait grows with the work between exchanges): the
halo model underprices the model's exchanges (docs/findings/app-exchanges.md).

So, as paper 003 looks loop times up rather than deriving them, ``benchdb app
calibrate`` also runs the distributed model itself, for every decomposition
of P ranks, on square global grids whose per-rank footprints run from 3/4 of
L1 in octaves (3/4 of each capacity: off the steep middle of the cache
transitions) up to 8x the last-level cache, in
:data:`PASSES` passes (the second in reverse order), all cases in one MPI job
(one compilation).  The runs are stored as app runs tagged
:data:`benchdb.app.exchange_table.CALIBRATION_TAG`; the application model
looks each field's exchange up by local footprint
(:mod:`benchdb.app.exchange_table`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from benchdb.app.decomposition import decompositions
from benchdb.app.exchange_table import CALIBRATION_TAG
from benchdb.app.model import AppCase
from benchdb.db.engine import Database
from benchdb.db.runstate import RunKind
from benchdb.errors import UserError
from benchdb.machine import MachineInfo

from ...kernels.builtin.shallow import SHALLOW
from .collect import run_cases

START_FRACTION_OF_L1 = 0.75
PASSES = 3
SECONDS_PER_CASE = 0.4
# A rough cost of a step, only to size the step counts (never a prediction): per
# local point, plus seven exchanges of a few microseconds.
SECONDS_PER_LOCAL_POINT = 10e-9
SECONDS_OF_EXCHANGES = 14e-6


def calibration_cases(
    machine: MachineInfo,
    ranks: int,
    precision: str,
    *,
    bytes_per_point: float | None = None,
    min_extent: int = 2,
) -> list[AppCase]:
    """Square global grids per decomposition of ``ranks``, local footprints one octave apart.

    The targets are per rank, up to 8x the LLC (every rank builds the global
    grid once to slice its block: ``ranks`` x that much memory for a moment).
    Grid sides are multiples of ``ranks``, so every decomposition divides them,
    and at least ``ranks`` x ``min_extent``.  ``bytes_per_point``: of the global
    grid, the built-in model's by default (13 arrays of (M+1)(N+1)).
    """
    if bytes_per_point is None:
        bytes_per_point = SHALLOW.footprint_bytes((1, 1), precision) / 4
    first = machine.data_caches()[0].size_bytes * START_FRACTION_OF_L1
    last = 8 * machine.last_level_cache().size_bytes
    targets = first * 2.0 ** np.arange(int(np.log2(last / first)) + 1)
    sides = [math.sqrt(t * ranks / bytes_per_point) for t in targets]
    smallest = ranks * min_extent
    grids = sorted({max(smallest, ranks * round(side / ranks)) for side in sides})
    return square_cases(grids, ranks, precision)


def square_cases(sides: list[int], ranks: int, precision: str) -> list[AppCase]:
    """Every decomposition of ``ranks`` of each square grid, with steps for
    :data:`SECONDS_PER_CASE` (sides are multiples of ``ranks``)."""
    cases = []
    for decomp in decompositions((sides[0], sides[0]), ranks):
        for g in sides:
            per_step = SECONDS_PER_LOCAL_POINT * g * g / ranks + SECONDS_OF_EXCHANGES
            steps = max(3, math.ceil(SECONDS_PER_CASE / per_step))
            cases.append(AppCase((g, g), decomp, steps, precision))
    return cases


def calibrate_exchanges(
    db: Database,
    cases: list[AppCase],
    *,
    timeout: float | None = None,
    progress: Callable[[str], None] | None = None,
    tags: Sequence[str] = (),
) -> int:
    """Run ``cases`` (:func:`calibration_cases`) ``PASSES`` times in one job, store them
    in one run; the number of app runs stored."""
    if not cases:
        raise UserError("no exchange calibration sizes fit this machine's caches")
    order = [c for p in range(PASSES) for c in (cases if p % 2 == 0 else cases[::-1])]
    if progress:
        grids = ", ".join(sorted({f"{c.grid[0]}" for c in cases}, key=int))
        progress(f"exchange calibration: {len(order)} runs of grids {grids} (square) in one job")
    ids = run_cases(
        db,
        order,
        kind=RunKind.APP_CALIBRATE,
        tags=(CALIBRATION_TAG, f"ppn{cases[0].decomp.ranks}", *tags),
        timeout=timeout,
        config={"ranks": cases[0].decomp.ranks, "passes": PASSES},
    )
    return len(ids)
