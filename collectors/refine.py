"""``benchdb refine``: measure where a benchmark's curves miss by more than the noise.

Rounds.  Each reads the benchmark's measurements on this node class, in this
software environment and code version, asks
:func:`benchdb.predict.refinement.gaps` of each of its kernels, turns the
targets into shapes not measured yet (:mod:`.sizes`) and measures them as one
sweep -- a run of mode ``refine``, tagged ``refine`` -- through
:func:`.sweep.run_sweep`: every pass is committed as it completes and the
kernels are checked against their references first, as in ``collect``.  A
round takes the :data:`ROUND_SHAPES` worst gaps' shapes and measures them in
that order with their passes interleaved, so a budget that runs out leaves
the least needed ones out, not the last passes of all.  It stops when no gap
has a new size to offer, the time budget is spent, or after ``max_rounds``.
The new runs join the curve like any other (``predict`` combines every run of
a node class and environment).

An unfinished refine run of this host and environment is continued first, as
``collect`` continues its own, so after Ctrl-C the same command goes on.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from benchdb.db import resume
from benchdb.db.engine import Database
from benchdb.db.measurements import machine_rows, registered_ids
from benchdb.db.repo import kernel_version
from benchdb.db.runs import REFINE_MODE
from benchdb.db.runstate import RunStatus
from benchdb.errors import UserError
from benchdb.predict.basis import rate_basis
from benchdb.predict.curve import build_curve
from benchdb.predict.lookup import Lookup, bare_lookup
from benchdb.predict.methods import METHODS
from benchdb.predict.refinement import Gap, gaps
from benchdb.predict.source import resolve_machine_caches, select_rows
from benchdb.shapes import shape_key

from ..kernels import Benchmark
from ..kernels.api import Shape
from ..kernels.registry import Catalog
from . import sizes
from .plan import (
    DEFAULT_PASSES,
    DEFAULT_SAMPLE_TIME,
    MIN_SAMPLES,
    Point,
    SweepPlan,
    check_memory,
    reload_user_code,
)
from .sweep import Context, SweepObserver, SweepResult, run_sweep, verify_plan

MODE = REFINE_MODE
MAX_ROUNDS = 10
ROUND_SHAPES = 12
"""New shapes per benchmark and round, the worst gaps' first: a round's points change the
gaps, so the next round looks again before it spends more."""


@dataclass(frozen=True)
class RefineSettings:
    """What the curves are judged with and how new points are measured."""

    method: str = "pchip"
    threads: int = 1
    precision: str = "float64"
    time_budget: float = 300.0
    max_rounds: int = MAX_ROUNDS
    passes: int = DEFAULT_PASSES
    sample_time: float = DEFAULT_SAMPLE_TIME
    samples: int = MIN_SAMPLES


@dataclass(frozen=True)
class Added:
    """A shape a round measures, and the gap that asked for it."""

    benchmark: str
    extents: Shape
    footprint_bytes: int
    gap: Gap

    @property
    def shape(self) -> str:
        """The shape's key, e.g. 600x400."""
        return shape_key(self.extents)


@dataclass(frozen=True)
class Round:
    index: int  # 0: an unfinished run continued
    added: tuple[Added, ...]
    sweep: SweepResult


@dataclass(frozen=True)
class RefineResult:
    rounds: tuple[Round, ...]
    stopped: str  # why it stopped, in words
    gaps: tuple[Gap, ...] = field(default=())  # left when it stopped


class RefineObserver(SweepObserver):
    """The sweep's hooks, and what each round plans (the default does nothing)."""

    def round_planned(self, index: int, added: Sequence[Added]) -> None:
        """Called before round ``index`` measures ``added`` (0: a run continued)."""


def _lookups(db: Database, bench: Benchmark, settings: RefineSettings, env: int) -> list[Lookup]:
    """One bare lookup per kernel of ``bench`` with data in environment ``env`` at the
    kernel's current code version; UserError if none has."""
    mc = resolve_machine_caches(db, None)
    names = [k.name for k in bench.kernels]
    rows = machine_rows(db, mc.scope, kernels=names, precision=settings.precision)
    method = METHODS.get(settings.method)
    out = []
    for info in bench.kernels:
        version = kernel_version(info)
        if not any(r["kernel"] == info.name and r["kernel_version"] == version for r in rows):
            continue
        sel = select_rows(
            rows,
            mc,
            info.name,
            threads=settings.threads,
            precision=settings.precision,
            environment_id=env,
            kernel_version=version,
        )
        basis = rate_basis(info.name, settings.precision, db, version)
        curve = build_curve(sel.rows, basis.work_per_point, basis.geometry)
        if len(curve) >= max(method.min_points, 3):
            out.append(bare_lookup(sel, basis, curve, method))
    if not out:
        raise UserError(
            f"no {settings.precision} measurements of {bench.name} with {settings.threads} "
            "thread(s) in this software environment and code version, at three sizes or more; "
            f"run `benchdb collect --kernels {bench.name}` first"
        )
    return out


def _shape_of(bench: Benchmark, target_fp: float, factor: float, precision: str) -> Shape | None:
    square = sizes.shape_for_footprint(bench, int(target_fp), precision)
    return square if math.isclose(factor, 1.0) else sizes.row_shape(bench, square, factor)


def plan_round(
    bench: Benchmark, lookups: Sequence[Lookup], precision: str
) -> tuple[list[Added], list[Gap]]:
    """(the new shapes of ``bench`` the gaps of its kernels ask for, worst gap first, at
    most :data:`ROUND_SHAPES`; every gap found)."""
    measured = {str(r["shape_key"]) for lk in lookups for r in lk.selection.rows}
    found = sorted((g for lk in lookups for g in gaps(lk)), key=lambda g: -g.excess)
    added: dict[str, Added] = {}
    for gap in found:
        for target in gap.targets:
            shape = _shape_of(bench, target.footprint, target.row_factor, precision)
            if shape is None:
                continue
            key = shape_key(shape)
            if key not in measured and key not in added:
                added[key] = Added(bench.name, shape, bench.footprint_bytes(shape, precision), gap)
    return list(added.values())[:ROUND_SHAPES], found


def _sweep_plan(
    adds: Sequence[Added], bench: Benchmark, s: RefineSettings, catalog: Catalog
) -> SweepPlan:
    points = tuple(
        Point(bench.name, a.extents, s.precision, s.threads, a.footprint_bytes) for a in adds
    )
    check_memory(points)
    return SweepPlan(MODE, points, s.sample_time, s.samples, s.passes, catalog, interleaved=True)


def _continue_unfinished(
    db: Database,
    host: int | None,
    env: int,
    context: Context,
    budget: float,
    observer: RefineObserver,
) -> Round | None:
    """The newest interrupted refine run of this host and environment, continued."""
    run_id = None if host is None else resume.find_resumable(db, host, env, None, mode=MODE)
    if run_id is None:
        return None
    config = resume.check_explicit(
        db, run_id, context.machine.fingerprint, context.environment.fingerprint
    )
    plan = SweepPlan.from_config(config, reload_user_code(config, run_id))
    observer.round_planned(0, ())
    result = run_sweep(
        db, plan, resume_run=run_id, time_budget=budget, observer=observer, context=context
    )
    return Round(0, (), result)


def refine(
    db: Database,
    benches: Sequence[Benchmark],
    settings: RefineSettings,
    context: Context,
    catalog: Catalog,
    observer: RefineObserver | None = None,
) -> RefineResult:
    """Continue an unfinished refine run, then refine ``benches`` (of ``catalog``) round
    by round (see the module docstring) within ``settings.time_budget`` seconds."""
    observer = observer or RefineObserver()
    t0 = time.monotonic()
    host, env = registered_ids(db, context.machine.fingerprint, context.environment.fingerprint)
    if env is None:
        raise UserError(
            "nothing was measured in this software environment yet; run `benchdb collect "
            f"--kernels {','.join(b.name for b in benches)}` first"
        )

    def lookups() -> dict[str, list[Lookup]]:
        return {b.name: _lookups(db, b, settings, env) for b in benches}

    def left() -> float:
        return settings.time_budget - (time.monotonic() - t0)

    current: dict[str, list[Lookup]] | None = lookups()  # every benchmark has data, first
    rounds: list[Round] = []
    continued = _continue_unfinished(db, host, env, context, left(), observer)
    if continued is not None:
        rounds.append(continued)
        if continued.sweep.status == RunStatus.INTERRUPTED:
            return RefineResult(tuple(rounds), "time budget spent")
        current = None
    found: list[Gap] = []
    for index in range(1, settings.max_rounds + 1):
        current = current or lookups()  # read again once a round has measured
        todo: list[tuple[Benchmark, list[Added]]] = []
        found = []
        for bench in benches:
            new, bench_gaps = plan_round(bench, current[bench.name], settings.precision)
            found.extend(bench_gaps)
            if new:
                todo.append((bench, new))
        if not todo:
            why = "no gap left" if not found else "every gap left is narrower than refine bisects"
            return RefineResult(tuple(rounds), why, tuple(found))
        if left() <= 0:
            return RefineResult(tuple(rounds), "time budget spent", tuple(found))
        for bench, new in todo:
            plan = _sweep_plan(new, bench, settings, catalog)
            verify_plan(plan)
            observer.round_planned(index, new)
            result = run_sweep(
                db,
                plan,
                time_budget=left(),
                tags=[MODE],
                observer=observer,
                context=context,
                verified=True,
            )
            rounds.append(Round(index, tuple(new), result))
            if result.status == RunStatus.INTERRUPTED:
                return RefineResult(tuple(rounds), "time budget spent", tuple(found))
        current = None
    return RefineResult(tuple(rounds), f"{settings.max_rounds} rounds done", tuple(found))
