"""What a sweep will measure: benchmarks x precisions x threads x shapes.

The plan is built and checked *before* anything is allocated or written, so
bad input (unknown kernel, zero size, too many threads, a footprint larger
than the free memory) ends the command with one line and exit status 2 and
leaves the database untouched.  The plan is stored in the run's ``config``
(with a content hash of it), which is what lets a later ``collect`` recognise
and resume an unfinished run of the same sweep.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchdb.errors import UserError
from benchdb.hashing import content_hash
from benchdb.machine import MachineInfo, available_memory_bytes
from benchdb.shapes import shape_key
from benchdb.units import fmt_bytes

from ..kernels import Benchmark
from ..kernels.api import DTYPE_BYTES, KernelError, Shape
from ..kernels.registry import BUILTIN, Catalog
from . import sizes

DEFAULT_SAMPLE_TIME = 0.020  # seconds: long against the ~15 ns clock read (docs/design.md)
QUICK_SAMPLE_TIME = 0.005
MIN_SAMPLES = 5  # docs/design.md "Measurement method": at least five samples, all stored
MAX_SAMPLES = 1000  # 20 s a point and pass at the default sample time
# Passes over the whole sweep.  On a shared machine the last-level cache and the
# memory bus are shared with other tenants, whose load comes and goes over
# seconds to minutes: every sample of one point may fall in one busy spell.
# Measuring each point again in later passes (the second in reverse order) and
# taking the median over all their samples decorrelates those spells (the
# effect of pooling is in docs/findings/collection.md); passes bring that
# pooling into one run (spells longer than a run remain).
DEFAULT_PASSES = 3
QUICK_PASSES = 1
MAX_PASSES = 10
# The automatic sweeps start no point that would end after this long (``collect
# --time-budget`` overrides it): with the checks before and the summary after, a
# default collect takes about five minutes.  The coarse points of every level run
# first, so a sweep stopped here has a usable curve, and the same command continues it.
DEFAULT_TIME_BUDGET = 285.0
AUTOMATIC_MODES = ("default", "quick")


@dataclass(frozen=True)
class Point:
    """One measured point: a benchmark at one shape, precision and thread count."""

    benchmark: str
    shape: Shape
    precision: str
    threads: int
    footprint_bytes: int
    round: sizes.Round = field(default=sizes.Round.COARSE, compare=False)  # not stored

    @property
    def key(self) -> tuple[str, str, int, str]:
        """What identifies a stored point (with the run): benchmark, shape, threads, precision."""
        return (self.benchmark, shape_key(self.shape), self.threads, self.precision)

    def to_json(self) -> list:
        return [self.benchmark, list(self.shape), self.precision, self.threads]

    @classmethod
    def from_json(cls, row: Sequence, catalog: Catalog = BUILTIN) -> Point:
        name, shape, precision, threads = row
        shape = tuple(int(n) for n in shape)
        return cls(
            name,
            shape,
            precision,
            int(threads),
            catalog.get(name).footprint_bytes(shape, precision),
        )


@dataclass(frozen=True)
class SweepPlan:
    """The points of a sweep, in the order they run, and how each is timed.

    ``catalog`` holds the benchmarks the points name: the built-ins and any
    user code loaded for the sweep, whose sources (with the hash of their
    code) are part of the stored plan.
    """

    mode: str  # "quick", "default" or "custom"
    points: tuple[Point, ...]
    sample_time: float
    samples: int
    passes: int = 1
    catalog: Catalog = field(default=BUILTIN, compare=False)
    interleaved: bool = False

    def benchmarks(self) -> list[Benchmark]:
        """The benchmarks the plan runs, in plan order."""
        return [self.catalog.get(name) for name in dict.fromkeys(p.benchmark for p in self.points)]

    def schedule(self, stored: dict[tuple[str, str, int, str], int]) -> list[tuple[int, Point]]:
        """(pass, point) still to measure, in run order, given passes ``stored`` per point key.

        Pass 0 runs the plan's order, pass 1 the reverse, and so on alternating, so
        that neighbouring sizes are not measured at the same moment twice.

        ``interleaved``: each point's pass ``p`` runs right after the next point's
        pass ``p - 1`` (A1 B1 A2 C1 B2 ...), so a point's repeats are one point
        apart and a slow spell of the host falls on both: the floor of a held-out
        check (``benchmarks/heldout.py``).
        """
        if self.interleaved:
            slots = sorted(
                (i + p, p, i) for i in range(len(self.points)) for p in range(self.passes)
            )
            return [
                (p, self.points[i]) for _, p, i in slots if stored.get(self.points[i].key, 0) <= p
            ]
        todo = []
        for p in range(self.passes):
            order = self.points if p % 2 == 0 else self.points[::-1]
            todo.extend((p, pt) for pt in order if stored.get(pt.key, 0) <= p)
        return todo

    def time_budget(self, given: float | None) -> float | None:
        """``given``, else :data:`DEFAULT_TIME_BUDGET` for an automatic sweep (none for
        explicit sizes: those are the user's to bound)."""
        if given is not None:
            return given
        return DEFAULT_TIME_BUDGET if self.mode in AUTOMATIC_MODES else None

    def sources(self) -> list[Mapping[str, Any]]:
        """The user code the plan's points run (how to load it, and its code's hash)."""
        used = {b.name for b in self.benchmarks()}
        return [
            s for s in self.catalog.sources if any(self.catalog.source_of.get(n) == s for n in used)
        ]

    def config(self) -> dict:
        """The JSON stored in ``run.config``; ``sweep_hash`` identifies the sweep."""
        body: dict[str, Any] = {
            "points": [p.to_json() for p in self.points],
            "sample_time": self.sample_time,
            "samples": self.samples,
            "passes": self.passes,
        }
        if self.interleaved:  # other sweeps' hashes stay what they were before this option
            body["interleaved"] = True
        sources = self.sources()
        if sources:  # a built-in sweep's hash stays what it was before user code existed
            body["sources"] = [dict(s) for s in sources]
        return {"mode": self.mode, "sweep_hash": content_hash(body), **body}

    @classmethod
    def from_config(cls, config: dict, catalog: Catalog = BUILTIN) -> SweepPlan:
        """The plan a run was started with (for ``--resume RUN``); ``catalog`` must hold
        the run's user code (:func:`benchdb.kernels.sources.reload_catalog`)."""
        return cls(
            mode=config.get("mode", "custom"),
            points=tuple(Point.from_json(row, catalog) for row in config["points"]),
            sample_time=float(config["sample_time"]),
            samples=int(config["samples"]),
            passes=int(config.get("passes", 1)),
            catalog=catalog,
            interleaved=bool(config.get("interleaved", False)),
        )


def load_user_code(programs: Sequence[str], plugins: Sequence[str]) -> Catalog:
    """The built-ins, the installed plugins and the ``--program`` / ``--plugin`` code:
    specs parsed, programs built, plugins imported; UserError naming the problem."""
    from ..kernels.sources import load_catalog

    try:
        return load_catalog(programs, plugins)
    except KernelError as exc:
        raise UserError(str(exc)) from None


def reload_user_code(config: Mapping[str, Any], run: int) -> Catalog:
    """The catalog run ``run`` was collected with (``--resume``); UserError if its code changed."""
    from ..kernels.sources import reload_catalog

    try:
        return reload_catalog(config.get("sources", []), run=run)
    except KernelError as exc:
        raise UserError(str(exc)) from None


def select_benchmarks(names: Sequence[str] | None, catalog: Catalog = BUILTIN) -> list[Benchmark]:
    """Benchmarks named directly, by family (``stream``) or by one of their kernels.

    A kernel name selects its whole benchmark: ``shallow.cu`` runs the full
    shallow time step, which times all its loops at once.  Without names: the
    code given with ``--program`` / ``--plugin`` where there is some, else
    every benchmark (built-in and installed plugins).
    """
    every = catalog.benchmarks
    if not names:
        given = [every[name] for name, src in catalog.source_of.items() if "entry_point" not in src]
        return given or list(every.values())
    chosen: list[Benchmark] = []
    for name in names:
        matches = [
            b
            for b in every.values()
            if name == b.name or any(name in (k.name, k.family) for k in b.kernels)
        ]
        if not matches:
            families = sorted({k.family for b in every.values() for k in b.kernels})
            raise UserError(
                f"unknown kernel {name!r}; use a benchmark ({', '.join(every)}), "
                f"a family ({', '.join(families)}) or a kernel name such as shallow.cu"
            )
        chosen.extend(b for b in matches if b not in chosen)
    order = list(every)
    return sorted(chosen, key=lambda b: order.index(b.name))


def check_support(
    benches: Sequence[Benchmark], threads: Sequence[int], precisions: Sequence[str]
) -> None:
    """Refuse a precision or thread count a user's benchmark does not run."""
    for bench in benches:
        missing = [p for p in precisions if p not in bench.precisions]
        if missing:
            raise UserError(
                f"{bench.name} runs {', '.join(bench.precisions)}, not {', '.join(missing)}; "
                f"choose --precision {bench.precisions[0]}"
            )
        limit = bench.max_threads
        if limit is not None and max(threads) > limit:
            raise UserError(
                f"{bench.name} runs with {limit} thread(s) only (its command has no "
                "{threads}); choose --threads 1 or add {threads} to the spec's command"
            )


THREADS_HERE = "numba can run here (NUMBA_NUM_THREADS)"


@dataclass(frozen=True)
class NodeLimits:
    """What one point may use, and whose limits they are (for the messages): this
    machine's (:meth:`here`), or a node's of the Slurm partition a job goes to, checked
    before the job is submitted."""

    threads: int
    memory_bytes: int | None  # None: the memory free when the plan is checked
    threads_are: str  # "numba can run here ...", "a node of partition debug has"

    @classmethod
    def here(cls) -> NodeLimits:
        return cls(thread_limit(), None, THREADS_HERE)


def parse_threads(text: str, limit: int, limit_is: str = THREADS_HERE) -> list[int]:
    """'1,2' -> [1, 2]; each a positive integer no larger than ``limit`` (the threads that
    ``limit_is``, for the message)."""
    out: list[int] = []
    for part in sizes.parse_list(text):
        if not part.isdigit() or int(part) < 1:
            raise UserError(
                f"--threads {text!r}: {part!r} is not a positive integer; write e.g. --threads 1,2"
            )
        if int(part) > limit:
            raise UserError(
                f"--threads {text!r}: {part} exceeds the {limit} threads {limit_is}; "
                "use at most that"
            )
        if int(part) not in out:
            out.append(int(part))
    if not out:
        raise UserError("--threads is empty; write e.g. --threads 1 or --threads 1,2")
    return out


def parse_precisions(text: str) -> list[str]:
    out = sizes.parse_list(text)
    bad = [p for p in out if p not in DTYPE_BYTES]
    if bad or not out:
        raise UserError(
            f"unknown precision {', '.join(bad) or repr(text)}; use {' or '.join(DTYPE_BYTES)} "
            "(comma-separated for both)"
        )
    return list(dict.fromkeys(out))


def build_plan(
    machine: MachineInfo,
    *,
    kernels: Sequence[str] | None = None,
    sizes_spec: str | None = None,
    footprints_spec: str | None = None,
    threads: Sequence[int] = (1,),
    precisions: Sequence[str] = ("float64",),
    quick: bool = False,
    sample_time: float | None = None,
    samples: int = MIN_SAMPLES,
    passes: int | None = None,
    catalog: Catalog = BUILTIN,
    free_memory: int | None = None,
) -> SweepPlan:
    """Every point of the sweep, checked against ``free_memory`` (default: what is free
    here now); UserError on bad input."""
    if sizes_spec and footprints_spec:
        raise UserError("give either --sizes or --footprints, not both")
    if samples < MIN_SAMPLES:
        raise UserError(f"--samples {samples} is too few; at least {MIN_SAMPLES} are taken")
    if samples > MAX_SAMPLES:
        raise UserError(
            f"--samples {samples} is too many (each point would take hours); at most "
            f"{MAX_SAMPLES}, or more --passes"
        )
    if passes is not None and not 1 <= passes <= MAX_PASSES:
        raise UserError(f"--passes {passes} must be between 1 and {MAX_PASSES}, e.g. 3")
    if sample_time is not None and not 0 < sample_time <= 60:
        raise UserError(f"--sample-time {sample_time} must be in (0, 60] seconds, e.g. 0.02")
    benches = select_benchmarks(kernels, catalog)
    check_support(benches, threads, precisions)
    if footprints_spec:
        targets = [
            sizes.Target(sizes.parse_footprint(t)) for t in sizes.parse_list(footprints_spec)
        ]
        if not targets:
            raise UserError("--footprints is empty; write e.g. --footprints 1MiB,64MiB")
        mode = "custom"
    elif sizes_spec:
        specs = sizes.parse_list(sizes_spec)
        if not specs:
            raise UserError("--sizes is empty; write e.g. --sizes 100x100,200x300")
        mode = "custom"
    else:
        density = sizes.QUICK_DENSITY if quick else sizes.DEFAULT_DENSITY
        targets = sizes.footprint_targets(machine, density, machine.memory_bytes)
        mode = "quick" if quick else "default"
    points: list[Point] = []
    for bench in benches:
        for precision in precisions:
            if sizes_spec:
                planned = [
                    sizes.PlannedShape(s, sizes.Round.COARSE)
                    for s in sizes.explicit_shapes(bench, specs)
                ]
            else:
                planned = sizes.shapes_for_footprints(bench, targets, precision)
            for t in threads:
                points.extend(
                    Point(
                        bench.name,
                        p.shape,
                        precision,
                        t,
                        bench.footprint_bytes(p.shape, precision),
                        p.round,
                    )
                    for p in planned
                )
    # round by round (a stable sort keeps benchmarks, precisions, threads and footprints in order)
    points.sort(key=lambda point: point.round)
    check_memory(points, free_memory)
    default_time = QUICK_SAMPLE_TIME if quick else DEFAULT_SAMPLE_TIME
    default_passes = QUICK_PASSES if quick else DEFAULT_PASSES
    return SweepPlan(
        mode,
        tuple(points),
        sample_time or default_time,
        samples,
        passes or default_passes,
        catalog,
    )


def check_memory(points: Sequence[Point], free: int | None = None) -> None:
    """Refuse (before allocating anything) a point larger than ``free`` bytes, by default
    the memory free here now."""
    free = available_memory_bytes() if free is None else free
    for p in points:
        if p.footprint_bytes > free:
            raise UserError(
                f"{p.benchmark} at {shape_key(p.shape)} ({p.precision}) needs "
                f"{fmt_bytes(p.footprint_bytes)} but only {fmt_bytes(free)} of memory is "
                "available; choose smaller --sizes/--footprints"
            )


def thread_limit() -> int:
    """How many threads a point may use: numba's pool size, at most the CPUs we may run on."""
    import numba

    allowed = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return min(numba.config.NUMBA_NUM_THREADS, allowed or 1)
