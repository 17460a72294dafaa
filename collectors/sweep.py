"""Running a sweep into the database: the collectors' Python API.

``run_sweep(db, plan)`` measures every point of ``plan``, in ``plan.passes``
passes (see :data:`.plan.DEFAULT_PASSES`), that the run does not already hold
and commits each point's pass in its own transaction (docs/design.md: an
interrupted sweep loses at most the point in flight).  It continues an
unfinished run of the same sweep when there is one (see
:mod:`benchdb.db.resume`), otherwise it starts a new run.

``time_budget``: no new point starts once the budget is spent (the point in
flight finishes, so the sweep may overrun by one point), nor, given
``expected`` (seconds a point's pass should take, :mod:`.estimate`), one that
would end beyond it once this call has measured something; the run is then
left ``interrupted`` and the same command continues it later.

Before anything is stored, every benchmark of the plan is verified
(:func:`verify_plan`): compiled kernels against their numpy references on a
small shape, a user's program by one run.  A failure there refuses the whole
sweep.  A point that fails later (a program that crashes or fails its own
check at one size) is stored invalid with the reason, and the sweep goes on.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from benchdb.db import resume
from benchdb.db.engine import Database
from benchdb.db.point_rows import PointRow, add_points, change_points
from benchdb.db.repo import register_environment, register_kernel, register_machine
from benchdb.db.runs import run_lifecycle, start_run
from benchdb.db.runstate import RunStatus
from benchdb.environment import EnvironmentInfo, detect_environment
from benchdb.errors import UserError
from benchdb.machine import MachineInfo, detect_machine
from benchdb.shapes import shape_key

from ..kernels import KernelInfo
from ..kernels.api import KernelError, PointFailure, Verification
from ..kernels.jit import OPTIONS
from .pinning import pinned, start_numba_threads
from .plan import Point, SweepPlan
from .record import add_failure, add_pass, failed_rows, measurement_rows
from .timing import time_point


class SweepObserver:
    """Progress hooks; the default does nothing (``--quiet``, notebooks)."""

    def started(self, run_id: int, todo: Sequence[Point], stored: int, resumed: bool) -> None:
        """Called once ``todo`` is known; ``stored`` points were already in the run."""

    def point_started(self, point: Point, pass_index: int) -> None:
        """Called before ``point`` is prepared for pass ``pass_index`` (from 0)."""

    def point_finished(self, point: Point) -> None:
        """Called after the point's pass is committed."""


@dataclass(frozen=True)
class SweepResult:
    run_id: int
    status: str  # complete, or interrupted (time budget spent)
    resumed: bool
    measured: int  # point-passes measured by this call
    already_stored: int  # point-passes the resumed run held before this call
    remaining: int  # point-passes still to measure (non-zero only when a budget stopped it)
    elapsed_s: float


@dataclass(frozen=True)
class Context:
    machine: MachineInfo
    environment: EnvironmentInfo


def detect_context() -> Context:
    """This machine and software, with numba's threading layer actually loaded."""
    layer = start_numba_threads()
    return Context(detect_machine(), detect_environment(threading_layer=layer, options=OPTIONS))


def _open_run(
    db: Database, plan: SweepPlan, ctx: Context, resume_run: int | None, tags: Sequence[str]
) -> tuple[int, bool]:
    """(run id, resumed?): claim the run to continue, else start a new one."""
    if resume_run is not None:
        if not resume.claim(db, resume_run):
            raise UserError(f"run {resume_run} was taken by another collector; try again")
        return resume_run, True
    with db.session() as s:
        machine_id = register_machine(s, ctx.machine).id
        environment_id = register_environment(s, ctx.environment).id
    config = plan.config()
    found = resume.find_resumable(db, machine_id, environment_id, config["sweep_hash"])
    if found is not None and resume.claim(db, found):
        return found, True
    run = start_run(
        db,
        kind=resume.RUN_KIND,
        config={**config, "uuid": new_uuid()},
        tags=list(tags),
        machine=ctx.machine,
        environment=ctx.environment,
    )
    return run.id, False


def new_uuid() -> str:
    """The run's natural key across databases (``benchdb import`` matches runs by it)."""
    return uuid.uuid4().hex


def verify_plan(plan: SweepPlan) -> list[Verification]:
    """Check every benchmark of ``plan`` at each of its precisions and thread counts
    (:meth:`~benchdb.kernels.api.Benchmark.verify`); UserError naming the first failure.

    Nothing is stored: call it before the database is opened.
    """
    settings = dict.fromkeys((p.precision, p.threads) for p in plan.points)
    found = []
    for bench in plan.benchmarks():
        for precision, threads in settings:
            with pinned(threads):
                try:
                    checked = bench.verify(precision, threads)
                except KernelError as exc:
                    raise UserError(f"{exc}; nothing was stored") from None
            if checked is not None:
                found.append(checked)
    return found


def register_plan_kernels(db: Database, plan: SweepPlan) -> dict[str, tuple[int, KernelInfo]]:
    infos = [k for bench in plan.benchmarks() for k in bench.kernels]
    with db.session() as s:
        return {k.name: (register_kernel(s, k).id, k) for k in infos}


def measure_point(
    db: Database,
    run_id: int,
    point: Point,
    plan: SweepPlan,
    kernels: dict[str, tuple[int, KernelInfo]],
    pass_index: int = 0,
    context: str | None = None,
) -> None:
    """Prepare, time and commit one pass of one point (one transaction).

    The first pass creates the point's rows; a later one appends its samples.
    A pass that fails (:class:`~benchdb.kernels.api.PointFailure`) is recorded
    as the reason the point is invalid.  ``context``: the rows' timing context, where
    not the kernels' own (:func:`.record.new_row`).
    """
    bench = plan.catalog.get(point.benchmark)
    points = bench.kernel_points(point.shape)
    timing, failure = None, None
    with pinned(point.threads) as placement:
        try:
            prepared = bench.prepare(point.shape, point.precision, point.threads)
            timing = time_point(prepared, plan.sample_time, plan.samples)
            del prepared  # free the arrays before the next point allocates
        except PointFailure as exc:
            failure = exc.reason
    name_of = {kid: name for name, (kid, _) in kernels.items()}

    def another_pass(row: PointRow) -> None:
        if failure is not None:
            add_failure(row, failure, kernels)
        elif timing is not None and name_of[row.kernel_id] in timing.samples:
            add_pass(row, timing, kernels)

    with db.session() as s:
        if pass_index == 0:
            add_points(
                s,
                failed_rows(run_id, point, points, failure, placement, kernels, context)
                if failure is not None
                else measurement_rows(run_id, point, points, timing, placement, kernels, context),
            )
            return
        change_points(
            s,
            run_id=run_id,
            kernel_ids=[kernels[k.name][0] for k in bench.kernels],
            shape_key=shape_key(point.shape),
            threads=point.threads,
            precision=point.precision,
            change=another_pass,
        )


def run_sweep(
    db: Database,
    plan: SweepPlan,
    *,
    resume_run: int | None = None,
    time_budget: float | None = None,
    tags: Sequence[str] = (),
    observer: SweepObserver | None = None,
    context: Context | None = None,
    verified: bool = False,
    expected: Callable[[Point], float] | None = None,
) -> SweepResult:
    """Measure the points of ``plan`` the run lacks; see the module docstring.

    ``verified``: the caller has run :func:`verify_plan` already.
    """
    observer = observer or SweepObserver()
    t0 = time.monotonic()
    if not verified:
        verify_plan(plan)
    ctx = context or detect_context()
    kernels = register_plan_kernels(db, plan)
    run_id, resumed = _open_run(db, plan, ctx, resume_run, tags)
    measured = 0
    with run_lifecycle(db, run_id) as outcome:
        todo = plan.schedule(resume.stored_points(db, run_id, plan.catalog.benchmark_of()))
        total = len(plan.points) * plan.passes
        observer.started(run_id, [pt for _, pt in todo], total - len(todo), resumed)
        for pass_index, point in todo:
            if time_budget is not None:
                ahead = expected(point) if expected is not None and measured else 0.0
                if time.monotonic() - t0 + ahead >= time_budget:
                    outcome.status = RunStatus.INTERRUPTED
                    break
            observer.point_started(point, pass_index)
            measure_point(db, run_id, point, plan, kernels, pass_index)
            measured += 1
            observer.point_finished(point)
    return SweepResult(
        run_id=run_id,
        status=outcome.status,
        resumed=resumed,
        measured=measured,
        already_stored=total - len(todo),
        remaining=len(todo) - measured,
        elapsed_s=time.monotonic() - t0,
    )
