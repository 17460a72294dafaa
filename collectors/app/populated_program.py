"""Loop curves of a populated node for a user's program: P copies of it at once, one a core.

What :mod:`.populated` does for the built-in model (paper 001 section 4: ranks
on one node share memory bandwidth and the last-level cache, so a loop runs
slower when its neighbours are busy), done for a program through its own line
protocol (docs/programs.md): every sample starts P copies of the program's
sweep command on the same shape together, each pinned to a CPU of its own, and
waits for all of them (:class:`benchdb.kernels.program.ProgramPrepared` with
``copies``).  The stored sample is the mean over the copies of each loop's time
per repetition, judged disturbed by the most delayed copy and retaken as in any
sweep.

The sweep is the program's own (``collect --program``'s sizes, samples and
passes, every second pass in reverse order), stored in one run tagged ``ppnP``
whose rows have the context ``program:ppnP``
(:class:`benchdb.app.context.LoopContext`); ``app predict --program`` looks the
loops of a run with P ranks a node up in them.  Each point's pass is committed
on its own, so an interrupted calibration keeps what it measured.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import replace

from benchdb.app.context import PROGRAM, LoopContext
from benchdb.db.engine import Database
from benchdb.db.runs import recorded_run
from benchdb.db.runstate import RunKind
from benchdb.errors import UserError
from benchdb.machine import MachineInfo, available_memory_bytes
from benchdb.units import fmt_bytes

from ...kernels.program import ProgramBenchmark
from ...kernels.registry import Catalog
from ..pinning import usable_cpus
from ..plan import Point, SweepPlan, build_plan, load_user_code
from ..sweep import detect_context, measure_point, register_plan_kernels, verify_plan
from .populated import check_ranks


def populated_program_plan(
    spec_path: str,
    ranks: int,
    machine: MachineInfo,
    *,
    quick: bool = False,
    sizes_spec: str | None = None,
    passes: int | None = None,
    sample_time: float | None = None,
) -> SweepPlan:
    """The sweep ``ranks`` copies of the program at ``spec_path`` run (built, not yet
    run); UserError for a bad rank count, spec or sizes, or sizes whose copies do not
    fit in memory, before a database is opened."""
    check_ranks(ranks, machine.cores)
    catalog = load_user_code([spec_path], [])
    [bench] = [b for b in catalog.benchmarks.values() if isinstance(b, ProgramBenchmark)]
    plan = build_plan(
        machine,
        kernels=[bench.name],
        sizes_spec=sizes_spec,
        quick=quick,
        passes=passes,
        sample_time=sample_time,
        catalog=catalog,
    )
    worst = max(p.footprint_bytes for p in plan.points) * ranks
    if worst > available_memory_bytes():
        raise UserError(f"{ranks} copies at the largest size need {fmt_bytes(worst)}; use --sizes")
    populated = replace(bench, copies=ranks, cpus=copy_cpus(ranks))
    return replace(
        plan, catalog=Catalog({bench.name: populated}, catalog.sources, catalog.source_of)
    )


def copy_cpus(ranks: int) -> tuple[int, ...]:
    """A CPU of its own for each of ``ranks`` copies, from those this process may use
    now, before the sweep pins it to one (:class:`~...kernels.program.ProgramBenchmark`);
    none where the OS pins nothing.  UserError where fewer are allowed (``taskset``, a
    cgroup): copies sharing a CPU would time each other's turns, not a populated node."""
    if not hasattr(os, "sched_setaffinity"):
        return ()
    cpus = usable_cpus()
    if len(cpus) < ranks:
        raise UserError(
            f"{ranks} copies need a CPU each, and this process may run on {len(cpus)} "
            f"({', '.join(map(str, cpus))}); allow it at least {ranks} (taskset -c, the "
            f"job's CPUs)"
        )
    return tuple(cpus[:ranks])


def calibrate_populated_program(
    db: Database,
    plan: SweepPlan,
    ranks: int,
    *,
    tags: Sequence[str] = (),
    progress: Callable[[Point, int], None] | None = None,
    verified: bool = False,
) -> tuple[int, int]:
    """Sweep ``plan`` (:func:`populated_program_plan`) with ``ranks`` copies of the
    program at once; (run id, point-passes measured).  The copies are checked first
    (one run each at the program's check shape, :func:`~..sweep.verify_plan`; the
    caller's, before it opened the database, where ``verified``): a program that
    fails there stores nothing."""
    if not verified:
        verify_plan(plan)
    ctx = detect_context()
    kernels = register_plan_kernels(db, plan)
    context = str(LoopContext(ranks, PROGRAM))
    config = {**plan.config(), "ranks": ranks}
    todo = plan.schedule({})
    with recorded_run(
        db,
        kind=RunKind.APP_CALIBRATE,
        config=config,
        tags=[f"ppn{ranks}", *tags],
        machine=ctx.machine,
        environment=ctx.environment,
    ) as run:
        for pass_index, point in todo:
            if progress is not None:
                progress(point, pass_index)
            measure_point(db, run.id, point, plan, kernels, pass_index, context)
    return run.id, len(todo)
