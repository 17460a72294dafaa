"""A year of history, written through benchdb's own write path (issue 56).

The template is one real collection (``benchdb collect --quick`` of this machine): its
points, sample counts and evidence.  The generator copies it into ``runs`` runs spread
over a year, on ``hosts`` hosts of ``classes`` node classes (class 0 is this machine's, so
that commands run without ``--machine`` read it), one environment per commit, with a
slow seasonal drift, a few per cent of noise per point and ``slowdowns`` planted steps
(one kernel 1.2x slower from one commit on).  Every ``full_every``-th run is a whole
sweep of the template (a node class swept after an OS update); the others measure the
template's points of ``ci_kernels`` (a CI job's ``collect --quick --kernels ...``).  The
first run of each class is pinned as its baseline, and the baseline is reset after each planted
step, with a reason, as a team would.  A few runs are left ``interrupted`` with half
their points (resumable runs, which pruning must keep).

It writes with the functions ``collect`` and ``import`` write with:
:func:`benchdb.db.repo.register_machine` / ``register_environment`` / ``get_or_create``
for hosts, classes, environments and kernels, :func:`benchdb.db.runs.new_run_row` for
runs, :func:`benchdb.db.point_rows.add_points` for the points (one transaction per run,
as ``import`` commits a run's points), and :func:`benchdb.db.baseline.set_baseline`.
"""

from __future__ import annotations

import dataclasses
import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select

from benchdb.db.baseline import set_baseline
from benchdb.db.engine import Database
from benchdb.db.models import Kernel, Measurement, Run
from benchdb.db.point_rows import COLUMNS, PointRow, add_points
from benchdb.db.repo import get_or_create, register_environment, register_machine
from benchdb.db.runs import new_run_row
from benchdb.db.runstate import RunStatus
from benchdb.environment import EnvironmentInfo, detect_environment
from benchdb.machine import MachineInfo, detect_machine

YEAR = timedelta(days=365)
SLOWDOWN = 1.2
DRIFT = 0.03  # amplitude of the seasonal drift of a class's speed
NOISE = 0.02  # per-point scatter of a run's median
INTERRUPTED_EVERY = 199  # one run in this many is left interrupted, half collected
BATCH = 200  # runs written in one transaction
_KERNEL_SKIP = {"id", "created_at"}


@dataclass(frozen=True)
class HistorySpec:
    """What history to write."""

    runs: int
    hosts: int = 8
    classes: int = 2
    commits: int = 100
    slowdowns: int = 3
    ci_kernels: tuple[str, ...] | None = ("stream.triad", "stencil2d5")  # None: all
    full_every: int = 50
    seed: int = 1
    end: datetime = dataclasses.field(default_factory=lambda: datetime.now(UTC))


@dataclass(frozen=True)
class Planted:
    """A step the generator planted: ``kernel`` 1.2x slower from ``commit`` on."""

    kernel: str
    commit: int
    factor: float


@dataclass
class Written:
    """What the generator wrote and how long the writing took."""

    runs: int = 0
    points: int = 0
    samples: int = 0
    seconds: float = 0.0
    planted: list[Planted] = dataclasses.field(default_factory=list)

    @property
    def seconds_per_point(self) -> float:
        return self.seconds / self.points if self.points else math.nan


@dataclass(frozen=True)
class TemplatePoint:
    """One stored point of the template run, with its kernel's record."""

    kernel: dict[str, Any]
    row: PointRow


def read_template(template: Database) -> list[TemplatePoint]:
    """The points of the template's newest complete run, in a stable order."""
    with template.reading() as s:
        run_id = s.scalars(
            select(Run.id)
            .where(Run.status == RunStatus.COMPLETE, Run.kind == "kernels")
            .order_by(Run.id.desc())
        ).first()
        if run_id is None:
            raise SystemExit("the template database holds no complete kernel run")
        found = s.execute(
            select(Measurement, Kernel)
            .join(Kernel, Measurement.kernel_id == Kernel.id)
            .where(Measurement.run_id == run_id, Measurement.valid.is_(True))
            .order_by(Kernel.name, Measurement.footprint_bytes, Measurement.shape_key)
        ).all()
        return [
            TemplatePoint(
                kernel={
                    c.key: getattr(k, c.key)
                    for c in Kernel.__table__.columns
                    if c.key not in _KERNEL_SKIP
                },
                row=PointRow(**{c: getattr(m, c) for c in COLUMNS}),
            )
            for m, k in found
        ]


def ci_subset(
    points: Sequence[TemplatePoint], kernels: Sequence[str] | None
) -> list[TemplatePoint]:
    """The template's points of ``kernels`` (every point: None): what a CI job's
    ``collect --quick --kernels ...`` measures, each kernel across all its sizes, so that
    the newest commit's run alone answers ``predict`` for them."""
    if kernels is None:
        return list(points)
    chosen = [p for p in points if p.kernel["name"] in kernels]
    if not chosen:
        raise SystemExit(f"the template measured none of {', '.join(kernels)}")
    return chosen


def host_infos(spec: HistorySpec, here: MachineInfo) -> list[MachineInfo]:
    """``spec.hosts`` hosts over ``spec.classes`` classes; class 0 is this machine's."""
    infos = []
    for h in range(spec.hosts):
        cls = h % spec.classes
        model = here.cpu_model if cls == 0 else f"{here.cpu_model} (scale class {cls})"
        infos.append(dataclasses.replace(here, hostname=f"scale{h:03d}", cpu_model=model))
    return infos


def environment_infos(spec: HistorySpec, here: EnvironmentInfo) -> list[EnvironmentInfo]:
    """One environment per commit (the commit is part of its fingerprint)."""
    return [dataclasses.replace(here, git_commit=f"{c:040x}"[-40:]) for c in range(spec.commits)]


def plant(spec: HistorySpec, kernels: Sequence[str], rng: random.Random) -> list[Planted]:
    """The planted steps: distinct kernels, commits in the second half of the year's first
    nine tenths (so that a step has runs after it)."""
    chosen = rng.sample(sorted(kernels), min(spec.slowdowns, len(kernels)))
    return [
        Planted(k, rng.randrange(spec.commits // 4, max(spec.commits * 9 // 10, 1)), SLOWDOWN)
        for k in chosen
    ]


def _factor(kernel: str, commit: int, when: float, cls: int, planted: Sequence[Planted]) -> float:
    """The planted steps and the class's seasonal drift at ``when`` (fraction of the year)."""
    f = 1.0 + DRIFT * math.sin(2 * math.pi * when + cls)
    for p in planted:
        if p.kernel == kernel and commit >= p.commit:
            f *= p.factor
    return f


def _scaled(row: PointRow, run_id: int, kernel_id: int, factor: float) -> PointRow:
    """``row`` of ``run_id`` with every time scaled by ``factor`` (rates by its inverse)."""
    out = dataclasses.replace(
        row,
        run_id=run_id,
        kernel_id=kernel_id,
        samples=[s * factor for s in row.samples],
        evidence=dict(row.evidence),
        set_aside=dict(row.set_aside),
        pass_counts=list(row.pass_counts),
        flags=list(row.flags),
        shape=list(row.shape),
    )
    for name in ("t_min", "t_median", "t_iqr"):
        value = getattr(row, name)
        setattr(out, name, None if value is None else value * factor)
    for name in ("flop_rate", "byte_rate"):
        value = getattr(row, name)
        setattr(out, name, None if value is None else value / factor)
    return out


def generate(
    db: Database,
    template: Sequence[TemplatePoint],
    spec: HistorySpec,
    progress: Callable[[Written], None] | None = None,
) -> Written:
    """Write ``spec.runs`` runs of ``template`` into ``db`` (see the module docstring)."""
    rng = random.Random(spec.seed)
    written = Written()
    t0 = time.perf_counter()
    with db.session() as s:
        hosts = [
            (register_machine(s, h).id, i % spec.classes)
            for i, h in enumerate(host_infos(spec, detect_machine()))
        ]
        envs = [
            register_environment(s, e).id for e in environment_infos(spec, detect_environment())
        ]
        kernel_ids = {}
        for t in template:
            rec = t.kernel
            key = (rec["name"], rec["version"])
            if key not in kernel_ids:
                lookup = {"name": rec["name"], "version": rec["version"]}
                rest = {k: v for k, v in rec.items() if k not in lookup}
                kernel_ids[key] = get_or_create(s, Kernel, lookup, **rest).id
    written.planted = plant(spec, {t.kernel["name"] for t in template}, rng)
    subset = ci_subset(template, spec.ci_kernels)
    start = spec.end - YEAR
    baseline_of: dict[int, int] = {}
    stepped: set[tuple[int, str]] = set()
    for first in range(0, spec.runs, BATCH):
        pins = []
        with db.session() as s:  # a batch of runs a transaction, as import writes a file
            for i in range(first, min(first + BATCH, spec.runs)):
                when = i / max(spec.runs, 1)
                host_id, cls = hosts[i % len(hosts)]
                commit = min(int(when * spec.commits), spec.commits - 1)
                full = i % spec.full_every == 0
                points = template if full else subset
                status = RunStatus.COMPLETE
                if i % INTERRUPTED_EVERY == INTERRUPTED_EVERY - 1:
                    status, points = RunStatus.INTERRUPTED, points[: len(points) // 2]
                started = start + when * YEAR + timedelta(seconds=rng.uniform(0, 600))
                run = new_run_row(
                    s,
                    command="benchdb collect --quick (benchmarks/scale.py)",
                    machine_id=host_id,
                    environment_id=envs[commit],
                    kind="kernels",
                    status=status,
                    config={"mode": "quick", "scale_generated": True},
                    tags=["ci"] if not full else ["sweep"],
                    hostname=f"scale{host_id:03d}",
                    pid=100000 + i,
                    started_at=started,
                    ended_at=started + timedelta(minutes=2),
                )
                factor = [
                    _factor(t.kernel["name"], commit, when, cls, written.planted)
                    * (1 + rng.gauss(0, NOISE))
                    for t in points
                ]
                add_points(
                    s,
                    (
                        _scaled(
                            t.row, run.id, kernel_ids[(t.kernel["name"], t.kernel["version"])], f
                        )
                        for t, f in zip(points, factor, strict=True)
                    ),
                )
                written.runs += 1
                written.points += len(points)
                written.samples += sum(len(t.row.samples) for t in points)
                if status == RunStatus.COMPLETE:
                    pins.append((run.id, cls, commit))
        for run_id, cls, commit in pins:
            _pin(db, run_id, cls, commit, written.planted, baseline_of, stepped)
        if progress is not None:
            written.seconds = time.perf_counter() - t0
            progress(written)
    written.seconds = time.perf_counter() - t0
    return written


def _pin(
    db: Database,
    run_id: int,
    cls: int,
    commit: int,
    planted: Sequence[Planted],
    baseline_of: dict[int, int],
    stepped: set[tuple[int, str]],
) -> None:
    """Pin a class's first complete run, and its first run after each planted step."""
    if cls not in baseline_of:
        set_baseline(db, str(run_id), reason="first run of the class")
        baseline_of[cls] = run_id
        return
    for p in planted:
        if commit >= p.commit and (cls, p.kernel) not in stepped:
            stepped.add((cls, p.kernel))
            set_baseline(db, str(run_id), reason=f"accepted: {p.kernel} {p.factor:g}x")
            baseline_of[cls] = run_id
