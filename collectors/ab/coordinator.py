"""The coordinator of ``benchdb ab``: the same points on both sides, stored as a pair.

1. Every worker (a pair of them per layout, :mod:`.process`) plans the sweep from the
   same request and checks every kernel against its numpy reference (as ``collect``
   does), all at the same time; a side that cannot
   (a plugin that does not import, a wrong kernel), or sides that would measure
   different points, stop the command before the database is opened.
2. The pair of runs is opened (:mod:`.pair_runs`): the unfinished pair of the same
   command, continued, else two new runs.
3. The points still missing are measured in an order shuffled per call, each on
   both sides as sample pairs (:mod:`.pairing`), and both sides' rows are committed
   in one transaction per point: an interruption loses at most the point in flight,
   and the two runs always hold the same points.

Ctrl-C, SIGTERM and a crash end both runs ``interrupted`` or ``failed``
(:func:`~benchdb.db.runs.run_lifecycle`); the same command continues them.  A time
budget stops starting points once spent (the runs are left ``interrupted``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

import numpy as np

from benchdb.db import resume
from benchdb.db.engine import Database
from benchdb.db.point_rows import add_points
from benchdb.db.runs import run_lifecycle
from benchdb.db.runstate import RunStatus
from benchdb.errors import UserError
from benchdb.machine import MachineInfo, detect_machine

from ..plan import Point
from ..record import add_pass, failed_rows, measurement_rows
from .pair_runs import SidePlan, open_pair, register_kernels
from .pairing import PairedTiming, measure_pair
from .process import WorkerProcess, check_python, environment_pads
from .protocol import SIDES, PlanRequest, Side

DEFAULT_FOOTPRINT_CAP = 32 * 2**20
PARTS_OF_HALF_A_CACHE = (4, 2, 1)
"""Each cache's footprints, as fractions of the largest (half of it, or the cap)."""


def default_footprints(machine: MachineInfo) -> str:
    """An eighth, a quarter and half of each data cache (half of it at most
    :data:`DEFAULT_FOOTPRINT_CAP`, the other two below that): nine sizes across three
    caches, so that a default ``ab`` over every kernel stays within minutes (a change
    that shows only beyond the last-level cache needs ``--footprints``).

    Three sizes a cache rather than one because a kernel's interval resamples its
    points (:func:`benchdb.regress.hierarchical.paired_change`): with three points in
    all, its 99 % interval spans about the lowest point to the highest, too wide for a
    small slowdown (docs/findings/ab-comparison.md)."""
    caches = machine.data_caches()
    if not caches:
        raise UserError(
            "cannot read this machine's cache sizes; give --sizes 64x64,... or "
            "--footprints 32KiB,1MiB,32MiB"
        )
    chosen = sorted(
        {
            min(c.size_bytes // 2, DEFAULT_FOOTPRINT_CAP) // part
            for c in caches
            for part in PARTS_OF_HALF_A_CACHE
        }
    )
    return ",".join(f"{b // 1024}KiB" for b in chosen)


@dataclass(frozen=True)
class PlannedPoint:
    """A point both sides measure, as the workers planned it."""

    point: Point
    kernel_points: Mapping[str, int]

    @classmethod
    def from_json(cls, row: Sequence[Any]) -> PlannedPoint:
        name, shape, precision, threads, footprint, kernel_points = row
        return cls(
            Point(name, tuple(shape), precision, int(threads), int(footprint)), kernel_points
        )


@dataclass(frozen=True)
class AbResult:
    runs: Mapping[str, int]  # by side
    status: str  # complete, or interrupted (time budget spent)
    resumed: bool
    order: str
    measured: int  # points measured by this call
    already_stored: int
    remaining: int
    elapsed_s: float
    checked: tuple[str, ...]
    database: str


class AbObserver:
    """Progress hooks; the default does nothing."""

    def started(self, runs: Mapping[str, int], todo: int, stored: int, resumed: bool) -> None:
        """Called once the pair of runs is open and the points to measure are known."""

    def point_started(self, point: Point) -> None:
        """Called before both sides prepare ``point``."""

    def point_finished(self, point: Point) -> None:
        """Called after both sides' rows of ``point`` are committed."""


def _plan(
    worker_pairs: Sequence[Mapping[str, WorkerProcess]], request: PlanRequest
) -> dict[str, dict]:
    """Every worker plans and checks its kernels, all at once; the first pair's replies by
    side (every pair of one side plans alike: the same code in another layout)."""
    for workers in worker_pairs:
        for w in workers.values():
            w.send(**request.message(w.side))
    first, *others = [{side: w.receive() for side, w in ws.items()} for ws in worker_pairs]
    for replies in others:
        for side in SIDES:
            if replies[side]["points"] != first[side]["points"]:
                raise UserError(
                    f"the {side} side's workers planned different points; is its code "
                    "changing while benchdb ab runs?"
                )
    replies = first
    points = {side: [p[:4] for p in r["points"]] for side, r in replies.items()}
    if points["base"] != points["change"]:
        only = {
            side: [p for p in pts if p not in points[other]]
            for (side, pts), other in zip(points.items(), SIDES[::-1], strict=True)
        }
        what = "; ".join(f"only the {s} side has {o[0][0]} {o[0][1]}" for s, o in only.items() if o)
        raise UserError(
            f"the two sides would measure different points ({what or 'in another order'}); "
            "give both the same kernels (a plugin variant must declare the same names)"
        )
    return replies


def _store(
    db: Database,
    runs: Mapping[str, int],
    planned: PlannedPoint,
    paired: PairedTiming,
    kernels: Mapping[str, Mapping[str, tuple[int, Any]]],
) -> None:
    """Both sides' rows of one point, in one transaction; each trial is a pass of the
    rows (``pass_counts`` says which kept samples each trial holds)."""
    with db.session() as s:
        for side in SIDES:
            if paired.failure is not None:
                rows = failed_rows(
                    runs[side], planned.point, planned.kernel_points, paired.failure, "none",
                    kernels[side],
                )  # fmt: skip
            else:
                first, *later = (trial[side] for trial in paired.trials)
                rows = measurement_rows(
                    runs[side], planned.point, planned.kernel_points, first,
                    paired.placements[side], kernels[side],
                )  # fmt: skip
                for timing in later:
                    for row in rows:
                        add_pass(row, timing, kernels[side])
            add_points(s, rows)


def _stored(db: Database, runs: Mapping[str, int], benchmark_of: dict[str, str]) -> set[tuple]:
    """Keys of the points both runs hold (committed together, so they agree)."""
    held = [set(resume.stored_points(db, run, benchmark_of)) for run in runs.values()]
    return held[0] & held[1]


def run_ab(
    open_db: Callable[[], Database],
    sides: Mapping[str, Side],
    request: PlanRequest,
    *,
    order: str,
    time_budget: float | None = None,
    tags: Sequence[str] = (),
    observer: AbObserver | None = None,
) -> AbResult:
    """Measure both sides (module docstring); ``open_db`` is called once the input is
    checked, so bad input creates no database."""
    observer = observer or AbObserver()
    t0 = time.monotonic()
    for side in SIDES:
        check_python(sides[side])
    with ExitStack() as stack:
        pads = dict(zip(SIDES, environment_pads([sides[s] for s in SIDES]), strict=True))
        worker_pairs = [
            {
                side: stack.enter_context(WorkerProcess(sides[side], pads[side], layout))
                for side in SIDES
            }
            for layout in range(request.processes)
        ]
        replies = _plan(worker_pairs, request)
        plans = {side: SidePlan.from_reply(sides[side], r) for side, r in replies.items()}
        points = [PlannedPoint.from_json(p) for p in replies["base"]["points"]]
        db = open_db()
        kernels = register_kernels(db, plans)
        runs, resumed = open_pair(db, detect_machine(), plans, order, request, tags)
        held = _stored(db, runs, replies["base"]["benchmark_of"])
        todo = [p for p in points if p.point.key not in held]
        rng = np.random.default_rng(runs["base"])
        todo = [todo[i] for i in rng.permutation(len(todo))]
        observer.started(runs, len(todo), len(points) - len(todo), resumed)
        measured = 0
        with run_lifecycle(db, runs["base"], runs["change"]) as outcome:
            for planned in todo:
                if time_budget is not None and time.monotonic() - t0 >= time_budget:
                    outcome.status = RunStatus.INTERRUPTED
                    break
                observer.point_started(planned.point)
                paired = measure_pair(
                    worker_pairs, planned.point.to_json(), request.pairs, order, rng,
                    request.trials,
                )  # fmt: skip
                _store(db, runs, planned, paired, kernels)
                measured += 1
                observer.point_finished(planned.point)
    return AbResult(
        runs=runs,
        status=outcome.status,
        resumed=resumed,
        order=order,
        measured=measured,
        already_stored=len(points) - len(todo),
        remaining=len(todo) - measured,
        elapsed_s=time.monotonic() - t0,
        checked=tuple(replies["base"]["checked"]),
        database=db.display_url,
    )
