"""Many collectors writing one database at once: errors, points lost or repeated, store time.

Does any collector fail, lose or repeat a point, and what does the crowd add to the time
each pass of a point takes to store?  What the nodes of a Slurm job array do when each
runs ``benchdb collect`` into one shared database.  N writer processes (64 on PostgreSQL,
8 on an SQLite file by default), each its own node (``SLURMD_NODENAME``) of this host's
node class, wait at a barrier, then each opens the database and runs a sweep of P points
x K passes through the collectors' own :func:`~benchdb.collectors.sweep.run_sweep`: it
registers the node class, host, environment and kernel, starts a run, commits every pass
of every point on its own and finishes the run, as ``collect`` does.  Only the kernel is
synthetic: a "program" that reports the time a 10 GB/s copy would take and runs nothing,
so that a pass costs the collector's own work and the store, not a measurement; its
samples are calibrated, judged, summarised and stored by the same code as a real point's
(:mod:`benchdb.collectors.record`).  The writers are forked from one process that has
imported benchdb (a forkserver): 64 interpreters importing numba each would take minutes
of this 2-core host before the first write.

Each writer times every pass's store: from the end of its last sample to its commit
(:meth:`SweepObserver.point_finished`), and splits it by the scheduler's account of its
thread (``/proc/thread-self/schedstat``) into its own CPU time, the time it waited for a
CPU, and the rest: waiting for the database (the server's reply, a lock, an fsync).  On
this 2-CPU host the 64 writers and the server share two CPUs, so the store time grows
with the queue for them; the database's part is nearer what nodes of their own would see
(it still holds the server's, or a lock holder's, wait for a CPU).  One writer runs
first, then N, into the same new database (a new PostgreSQL schema or SQLite file, its
schema made before they start: the race to make it is
``benchmarks/new_database_race.py``'s), so the ratio of their store times is the cost
the crowd adds, measured in one invocation.  Then the database is read back: every
writer's run complete, each of its P points stored once, with K passes.

By default the stores come back to back, the database's worst case; ``--measure-s``
puts a real pass's measuring time before each (asleep, so it takes no CPU from the other
writers, as a node measuring on its own CPUs would not): 0.25 s is a default collect's
average pass on this host (docs/findings/sweep-plan.md).

    python benchmarks/many_writers.py                     # 64 writers on PostgreSQL
    python benchmarks/many_writers.py --backend sqlite    # 8 writers on an SQLite file
    python benchmarks/many_writers.py --measure-s 0.25    # stores spaced as collect's
    python benchmarks/many_writers.py --writers 16 --points 5 --passes 2 --url URL

Figures: docs/findings/many-writers.md.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import queue
import tempfile
import threading
import time
import traceback
import uuid
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import quote

from benchdb.collectors.plan import (
    DEFAULT_PASSES,
    DEFAULT_SAMPLE_TIME,
    MIN_SAMPLES,
    Point,
    SweepPlan,
)
from benchdb.collectors.sweep import SweepObserver, run_sweep
from benchdb.kernels.api import KernelInfo, Shape
from benchdb.kernels.declared import ByGeometry
from benchdb.kernels.geometry import Geometry
from benchdb.kernels.registry import Catalog
from sqlalchemy import create_engine, select, text

from benchdb.db.engine import open_database
from benchdb.db.models import Machine, Measurement, Run
from benchdb.shapes import shape_key
from benchdb.slurm.jobs import NODE_VAR

PG = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
WRITERS = {"postgres": 64, "sqlite": 8}
POINTS = 10
PRECISION = "float64"
BYTES_PER_S = 10e9  # the rate the synthetic kernel reports
START_TIMEOUT_S = 300.0  # for every writer to reach the barrier (forked, not imported)
PRELOAD = "benchdb.collectors.sweep"  # what makes an interpreter slow to start: numba, scipy
SCHEDSTAT = "/proc/thread-self/schedstat"  # its 2nd field: ns the thread waited for a CPU

KERNEL = KernelInfo(
    name="manywriters.copy",
    family="manywriters",
    ndim=1,
    flops_per_point=0.0,
    loads_per_point=1.0,
    stores_per_point=1.0,
    arrays=2,
    description="synthetic: reports a copy's time, runs nothing (benchmarks/many_writers.py)",
    origin="plugin",
)


class Clock(NamedTuple):
    """Seconds of wall clock, of this thread on a CPU, and of it waiting for one."""

    wall: float
    on_cpu: float
    queued: float

    @classmethod
    def now(cls) -> Clock:
        """Read while this thread runs, so its wait for a CPU so far is all counted (the
        kernel adds each wait as the thread gets its CPU); the CPU time is the thread
        clock, which counts the current slice (schedstat's adds it at the next switch)."""
        with open(SCHEDSTAT) as f:
            queued_ns = int(f.read().split()[1])
        return cls(time.perf_counter(), time.thread_time(), queued_ns * 1e-9)

    def __sub__(self, other: Clock) -> Clock:
        return Clock(*(a - b for a, b in zip(self, other, strict=True)))

    @property
    def db_wait(self) -> float:
        """Off the CPU and not waiting for one: for the database (its server's reply, its
        lock, its fsync)."""
        return self.wall - self.on_cpu - self.queued


class Synthetic(ByGeometry):
    """A benchmark that runs nothing: a point's repetitions report the time a copy of its
    two arrays at :data:`BYTES_PER_S` would take.  It notes when the last sample ended,
    which is where the store of the point's pass begins."""

    name = "manywriters"
    kernels = (KERNEL,)
    geometry = Geometry(ndim=1, min_extent=1, points=lambda s: s[0], elements=lambda s: 2 * s[0])
    precisions = (PRECISION,)
    max_threads = 1

    def __init__(self) -> None:
        self.last_sample_end = Clock(0.0, 0.0, 0.0)

    def prepare(self, shape: Shape, precision: str, threads: int = 1) -> Reported:
        return Reported(self, self.footprint_bytes(shape, precision))

    def verify(self, precision: str, threads: int) -> None:
        """Nothing to check against a reference: nothing runs."""


@dataclass
class Reported:
    """A point of :class:`Synthetic`, timed as a user's program is
    (:class:`~benchdb.kernels.api.SelfTimed`: the times it reports count, not the wall
    clock around it), so that calibration and samples take no time."""

    bench: Synthetic
    footprint_bytes: int

    def run(self, repetitions: int) -> dict[str, float]:
        self.bench.last_sample_end = Clock.now()
        return {KERNEL.name: repetitions * self.footprint_bytes / BYTES_PER_S}

    def checksum(self) -> float:
        return float(self.footprint_bytes)

    def reported_seconds(self, times: Mapping[str, float]) -> float:
        return times[KERNEL.name]

    def last_schedstat(self) -> None:
        """No child process: the evidence falls back to the wall-clock gap."""


@dataclass(frozen=True)
class Sweep:
    """Each writer's sweep: ``points`` sizes of the synthetic kernel, ``passes`` passes,
    sampled as ``collect`` samples by default; ``measure_s``: seconds each pass first
    sleeps, in place of measuring (0: the stores come back to back, the database's worst
    case)."""

    points: int
    passes: int
    measure_s: float = 0.0

    def plan(self) -> tuple[SweepPlan, Synthetic]:
        bench = Synthetic()
        shapes = [(1024 * (i + 1),) for i in range(self.points)]
        planned = tuple(
            Point(bench.name, s, PRECISION, 1, bench.footprint_bytes(s, PRECISION)) for s in shapes
        )
        catalog = Catalog({bench.name: bench})
        plan = SweepPlan("custom", planned, DEFAULT_SAMPLE_TIME, MIN_SAMPLES, self.passes, catalog)
        return plan, bench


class StoreTimer(SweepObserver):
    """What each pass's store took, from its last sample to its commit; before each pass,
    the sweep's measuring time, asleep: a node measuring on its own CPUs takes none from
    the other writers, which here share this host's."""

    def __init__(self, bench: Synthetic, measure_s: float) -> None:
        self.bench = bench
        self.measure_s = measure_s
        self.stores: list[Clock] = []

    def point_started(self, point: Point, pass_index: int) -> None:
        time.sleep(self.measure_s)

    def point_finished(self, point: Point) -> None:
        self.stores.append(Clock.now() - self.bench.last_sample_end)


@dataclass(frozen=True)
class Written:
    """What one writer reports: its host, the last line of any exception, its stores."""

    host: str
    error: str | None
    stores: tuple[Clock, ...]


def write(url: str, host: str, sweep: Sweep, barrier: Any, out: Any) -> None:
    """One node's collector: wait for the others, then open the database and sweep."""
    os.environ[NODE_VAR] = host  # read once, when the sweep detects this machine
    plan, bench = sweep.plan()
    timer = StoreTimer(bench, sweep.measure_s)
    error = None
    try:
        barrier.wait(START_TIMEOUT_S)
        db = open_database(url)
        try:
            run_sweep(db, plan, observer=timer)
        finally:
            db.close()
    except Exception:  # every failure is the result: reported, counted, shown
        error = traceback.format_exc().strip().splitlines()[-1]
    out.put(Written(host, error, tuple(timer.stores)))


@dataclass(frozen=True)
class Phase:
    """Writers started at one instant: what each reported, and the seconds from the
    barrier to the last report."""

    hosts: tuple[str, ...]
    written: tuple[Written, ...]
    wall_s: float

    @property
    def errors(self) -> list[str]:
        return [f"{w.host}: {w.error}" for w in self.written if w.error]

    @property
    def stores(self) -> list[Clock]:
        return [t for w in self.written for t in w.stores]


def write_at_once(
    url: str, writers: int, sweep: Sweep, prefix: str, timeout: float = 600.0
) -> Phase:
    """Start ``writers`` writers (hosts ``prefix000``, ...) at one barrier; a writer that
    has not reported after ``timeout`` seconds is killed and counted as an error."""
    ctx = mp.get_context("forkserver")
    # imported once, forked N times; named, as Python 3.11's forkserver never preloads
    # the "__main__" of a script (it asks for a "main_path" that spawn calls otherwise)
    ctx.set_forkserver_preload([PRELOAD, __name__])
    hosts = tuple(f"{prefix}{i:03d}" for i in range(writers))
    barrier, out = ctx.Barrier(writers + 1), ctx.Queue()
    procs = [ctx.Process(target=write, args=(url, h, sweep, barrier, out)) for h in hosts]
    for p in procs:
        p.start()
    with suppress(threading.BrokenBarrierError):  # a writer died first: it says why
        barrier.wait(START_TIMEOUT_S)
    t0 = time.perf_counter()
    written = _collect(out, procs, writers, time.monotonic() + timeout)
    wall = time.perf_counter() - t0
    for p in procs:
        p.join(10)
        if p.is_alive():
            p.kill()
            p.join()
    silent = [
        Written(h, f"no report (exit code {p.exitcode})", ())
        for h, p in zip(hosts, procs, strict=True)
        if h not in written
    ]
    return Phase(hosts, (*written.values(), *silent), wall)


def _collect(out: Any, procs: Sequence[Any], writers: int, deadline: float) -> dict[str, Written]:
    """The writers' reports by host, until all are in, all writers are gone, or the
    deadline passes."""
    written: dict[str, Written] = {}
    while len(written) < writers and time.monotonic() < deadline:
        try:
            w = out.get(timeout=1.0)
        except queue.Empty:
            if not any(p.is_alive() for p in procs):
                break
            continue
        written[w.host] = w
    return written


@dataclass(frozen=True)
class Stored:
    """What the database holds of a phase's writers."""

    runs: int
    complete: int
    expected: int  # points: writers x points
    stored: int  # distinct points stored
    lost: int  # points expected and not stored
    duplicated: int  # rows beyond one per point, and points no writer planned
    wrong_passes: int  # points stored with other than K passes (a pass lost or repeated)
    node_classes: int
    environments: int


def read_back(url: str, hosts: Sequence[str], sweep: Sweep) -> Stored:
    """Count, by the unique point key (host, kernel, shape, threads, precision, context),
    what the runs of ``hosts`` stored."""
    plan, _ = sweep.plan()
    db = open_database(url, create=False)
    try:
        with db.reading() as s:
            runs = s.execute(
                select(Run.status, Run.environment_id, Machine.node_class_id)
                .join(Machine, Run.machine_id == Machine.id)
                .where(Machine.hostname.in_(hosts))
            ).all()
            rows = s.execute(
                select(
                    Machine.hostname,
                    Measurement.kernel_id,
                    Measurement.shape_key,
                    Measurement.threads,
                    Measurement.precision,
                    Measurement.context,
                    Measurement.passes,
                )
                .join(Run, Measurement.run_id == Run.id)
                .join(Machine, Run.machine_id == Machine.id)
                .where(Machine.hostname.in_(hosts))
            ).all()
    finally:
        db.close()
    keys = Counter((host, key) for host, _, key, *_ in rows)
    expected = {(h, shape_key(p.shape)) for h in hosts for p in plan.points}
    by_point = Counter(r[:6] for r in rows)
    return Stored(
        runs=len(runs),
        complete=sum(status == "complete" for status, _, _ in runs),
        expected=len(expected),
        stored=len(expected & keys.keys()),
        lost=len(expected - keys.keys()),
        duplicated=sum(n - 1 for n in by_point.values()) + len(keys.keys() - expected),
        wrong_passes=sum(r[6] != sweep.passes for r in rows),
        node_classes=len({c for _, _, c in runs}),
        environments=len({e for _, e, _ in runs}),
    )


def quantile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (nearest rank above) of ``values``; nan when there are none."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@contextmanager
def new_database(backend: str, server: str) -> Iterator[str]:
    """A new, empty database: a schema on the PostgreSQL ``server`` (dropped after) or an
    SQLite file in a temporary folder."""
    if backend == "sqlite":
        with tempfile.TemporaryDirectory(prefix="manywriters") as tmp:
            yield f"sqlite:///{Path(tmp) / 'manywriters.sqlite'}"
        return
    schema = f"manywriters_{uuid.uuid4().hex[:10]}"
    admin = create_engine(server)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    admin.dispose()  # no connection of this process open while the writers run
    try:
        yield f"{server}{'&' if '?' in server else '?'}options={quote(f'-csearch_path={schema}')}"
    finally:
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


COUNTS = (
    "| writers | errors | runs complete | points expected | stored | lost | duplicated "
    "| passes wrong | node classes | environments | point-passes/s | wall s |\n" + "|---" * 12 + "|"
)
TIMES = (
    "| writers | store median | p90 | own CPU median | waiting for a CPU median | p90 "
    "| waiting for the database median | p90 |\n" + "|---" * 8 + "|"
)
PARTS = {  # what a store's time is made of, by name
    "store": lambda c: c.wall,
    "own CPU": lambda c: c.on_cpu,
    "waiting for a CPU": lambda c: c.queued,
    "waiting for the database": lambda c: c.db_wait,
}


def ms(phase: Phase, part: str, q: float) -> float:
    """The ``q`` quantile over every store of ``phase`` of its ``part``, in milliseconds."""
    return quantile([PARTS[part](c) for c in phase.stores], q) * 1e3


def count_row(phase: Phase, stored: Stored) -> str:
    return (
        f"| {len(phase.hosts)} | {len(phase.errors)} | {stored.complete}/{len(phase.hosts)} "
        f"| {stored.expected} | {stored.stored} | {stored.lost} | {stored.duplicated} "
        f"| {stored.wrong_passes} | {stored.node_classes} | {stored.environments} "
        f"| {len(phase.stores) / phase.wall_s:.0f} | {phase.wall_s:.1f} |"
    )


def time_row(phase: Phase) -> str:
    cells = [
        ms(phase, "store", 0.5),
        ms(phase, "store", 0.9),
        ms(phase, "own CPU", 0.5),
        ms(phase, "waiting for a CPU", 0.5),
        ms(phase, "waiting for a CPU", 0.9),
        ms(phase, "waiting for the database", 0.5),
        ms(phase, "waiting for the database", 0.9),
    ]
    return f"| {len(phase.hosts)} | " + " | ".join(f"{c:.1f}" for c in cells) + " |"


def run(url: str, writers: int, sweep: Sweep) -> None:
    """One writer, then ``writers`` at once, into ``url``; print what each stored, the
    store times per point-pass (ms) and their ratios, and every error."""
    open_database(url).close()  # the schema, before any writer starts
    tag = uuid.uuid4().hex[:6]
    results = []
    print(COUNTS)
    for n in (1, writers):
        phase = write_at_once(url, n, sweep, prefix=f"mw{tag}-{n}w-")
        stored = read_back(url, phase.hosts, sweep)
        results.append((phase, stored))
        print(count_row(phase, stored), flush=True)
    (one, _), (many, _) = results
    print(f"\nstore time per point-pass, ms\n\n{TIMES}\n{time_row(one)}\n{time_row(many)}\n")
    for part in ("store", "waiting for the database"):
        ratios = [ms(many, part, q) / ms(one, part, q) for q in (0.5, 0.9)]
        print(f"{part}, {writers} writers / 1: median {ratios[0]:.1f}x, p90 {ratios[1]:.1f}x")
    for error, count in Counter(e.split(": ", 1)[1] for p, _ in results for e in p.errors).items():
        print(f"  {count} x {error}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=sorted(WRITERS), default="postgres")
    ap.add_argument("--url", help="a scratch database to write (default: a new one)")
    ap.add_argument(
        "--postgres", default=PG, help="server for the new schema (default %(default)s)"
    )
    ap.add_argument(
        "--writers",
        type=int,
        help="default: 64 on PostgreSQL (each holds one connection: max_connections), 8 on SQLite",
    )
    ap.add_argument("--points", type=int, default=POINTS, help="P (default %(default)s)")
    ap.add_argument("--passes", type=int, default=DEFAULT_PASSES, help="K (default %(default)s)")
    ap.add_argument(
        "--measure-s",
        type=float,
        default=0.0,
        help="seconds each pass sleeps in place of measuring (default 0: stores back to back)",
    )
    args = ap.parse_args()
    if args.url:  # its own backend, whatever --backend says
        args.backend = "sqlite" if args.url.startswith("sqlite") else "postgres"
    writers = args.writers or WRITERS[args.backend]
    if min(writers, args.points, args.passes) < 1 or args.measure_s < 0:
        ap.error("--writers, --points and --passes must be at least 1, --measure-s at least 0")
    sweep = Sweep(args.points, args.passes, args.measure_s)
    print(
        f"{writers} writers x {args.points} points x {args.passes} passes "
        f"({args.measure_s:g} s measuring each), "
        f"{args.backend}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}"
    )
    given = nullcontext(args.url) if args.url else None
    with given or new_database(args.backend, args.postgres) as url:
        run(url, writers, sweep)


if __name__ == "__main__":
    main()
