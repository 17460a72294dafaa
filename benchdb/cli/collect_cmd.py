"""``benchdb collect``: populate the database on this machine.

A thin layer over :func:`benchdb.collectors.sweep.run_sweep`: parse and check
the options (bad input exits 2 before anything is allocated or written), show
a progress bar, print a per-kernel summary at the end.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from ..collectors.estimate import estimate, measure_rates, pass_seconds
from ..db.measurements import measurements_frame
from ..db.runstate import RunStatus
from ..errors import UserError
from ..evidence import set_aside_count
from ..machine import detect_machine
from ..shapes import shape_key
from ..units import fmt_bytes, fmt_seconds
from .common import (
    DbOption,
    JsonOption,
    err_console,
    finite,
    input_file,
    open_db,
    print_json,
    print_table,
)
from .measurements_cmd import rate_text
from .plan_view import estimate_line, show_plan

if TYPE_CHECKING:
    import pandas as pd

    from ..collectors.plan import NodeLimits, SweepPlan
    from ..collectors.sweep import SweepResult
    from ..db.engine import Database
    from ..machine import MachineInfo


class ProgressObserver:
    """A rich progress bar on stderr: current kernel, size, points done, ETA.

    It is redrawn between points only, never by a thread of its own: a thread that
    wakes during a sample competes for the measuring thread's CPU, and its wait for a
    CPU is read as that sample's disturbance (:mod:`benchdb.collectors.probes`).
    ``announce`` gives a line to print once the work is known (the estimate).
    """

    def __init__(self, announce: Callable[[Sequence[Any]], str] | None = None) -> None:
        self.announce = announce
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=err_console,
            transient=False,
            auto_refresh=False,
        )
        self.task: Any = None

    def started(self, run_id: int, todo: Sequence[Any], stored: int, resumed: bool) -> None:
        verb = (
            f"continuing run {run_id} ({stored} point-passes already stored)"
            if resumed
            else (f"run {run_id}")
        )
        err_console.print(f"collecting {len(todo)} point-passes, {verb}")
        if todo and self.announce is not None:
            err_console.print(self.announce(todo), highlight=False, soft_wrap=True)
        self.progress.start()
        self.task = self.progress.add_task("starting", total=len(todo))

    def point_started(self, point: Any, pass_index: int) -> None:
        self.progress.update(
            self.task,
            description=f"pass {pass_index + 1}: {point.benchmark} {shape_key(point.shape)} "
            f"({fmt_bytes(point.footprint_bytes)}, {point.threads}t, {point.precision})",
            refresh=True,
        )

    def point_finished(self, point: Any) -> None:
        self.progress.advance(self.task)
        self.progress.refresh()

    def stop(self) -> None:
        self.progress.stop()


def summary_rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Per kernel, precision and threads of a run's measurements: points, footprints, peak
    and largest-size rate, noisy points, samples set aside as disturbed (and retaken), and
    the shapes of the points left short of clean samples (flagged ``disturbed``)."""
    rows = []
    for (kernel, precision, threads), g in frame.groupby(
        ["kernel", "precision", "threads"], sort=False
    ):
        g = g.sort_values("footprint_bytes")
        rate = g["flop_rate"] if g["flop_rate"].notna().any() else g["byte_rate"]
        best = g.loc[rate.idxmax()] if rate.notna().any() else g.iloc[-1]
        rows.append(
            {
                "kernel": kernel,
                "precision": precision,
                "threads": int(threads),
                "points": len(g),
                "valid": int(g["valid"].sum()),
                "invalid_because": next(iter(g.loc[~g["valid"], "flags"]), []),
                "footprint_min": int(g["footprint_bytes"].iloc[0]),
                "footprint_max": int(g["footprint_bytes"].iloc[-1]),
                "peak": rate_text(best.to_dict()),
                "peak_footprint": int(best["footprint_bytes"]),
                "largest": rate_text(g.iloc[-1].to_dict()),
                "noisy": int(sum("noisy" in f for f in g["flags"])),
                "retaken": int(sum(set_aside_count(a) for a in g["set_aside"])),
                "disturbed": g.loc[
                    g["flags"].map(lambda f: "disturbed" in f), "shape_key"
                ].tolist(),
            }
        )
    return rows


SUMMARY_COLUMNS = [
    ("kernel", "kernel", None),
    ("setting", "setting", None),
    ("points", "points", None),
    ("footprints", "footprints", None),
    ("peak_at", "peak rate", None),
    ("largest", "at largest", None),
    ("noisy", "noisy", None),
    ("retaken", "retaken", None),
    ("disturbed", "disturbed", lambda v: str(len(v))),
]


def retaken_samples(frame: pd.DataFrame) -> int:
    """Samples set aside in a run's measurements, each once: the kernels a benchmark times
    in one sample (shallow's loops and step) share it, and with it the same evidence."""
    seen = {
        (row.shape_key, row.threads, row.precision, tuple(row.set_aside.get("wall_s", ())))
        for row in frame.itertuples()
    }
    return sum(len(key[3]) for key in seen)


SHOWN_DISTURBED = 6  # points the line names; the rest it counts


def disturbed_line(run_id: int, rows: list[dict[str, Any]], retaken: int) -> str | None:
    """One line on the samples retaken and the points left disturbed, or None if none were.

    A point none of whose samples ran clean keeps them all and sets none aside, so it
    is named even where nothing was retaken: a CPU shared for the whole sweep."""
    left = [f"{r['kernel']} {shape}" for r in rows for shape in r["disturbed"]]
    if not (retaken or left):
        return None
    parts = []
    if retaken:
        parts.append(
            f"{retaken} sample(s) were disturbed (their thread waited for a CPU that another "
            "task held) and taken again"
        )
    if left:
        more = len(left) - SHOWN_DISTURBED
        named = ", ".join(left[:SHOWN_DISTURBED]) + (f" and {more} more" if more > 0 else "")
        parts.append(
            f"{len(left)} point(s) still short of clean samples, flagged disturbed: {named} "
            f"(`benchdb measurements show --run {run_id}`: LOST says how much CPU time "
            "another task took)"
        )
    return "; ".join(parts)


def _table_row(row: dict[str, Any]) -> dict[str, Any]:
    """A summary row in human units, narrow enough for an 80-column terminal."""
    return {
        **row,
        "setting": f"{row['precision']} {row['threads']}t",
        "footprints": f"{fmt_bytes(row['footprint_min'])}-{fmt_bytes(row['footprint_max'])}",
        "peak_at": f"{row['peak']} @ {fmt_bytes(row['peak_footprint'])}",
    }


def check_tags(tags: Sequence[str] | None) -> None:
    """Every ``--tag`` must say something."""
    if tags and not all(t.strip() for t in tags):
        raise UserError("--tag is empty; give each a label, e.g. --tag nightly")


@dataclass(frozen=True)
class SweepOptions:
    """The options of ``collect`` that choose a new sweep, as given on the command line.

    One place turns them into a checked plan, for ``collect`` here and for ``slurm
    collect`` before it submits (``benchdb.cli.slurm_cmd``), so a bad option is refused
    the same way, with the same line, in both.
    """

    kernels: str | None
    program: tuple[str, ...]
    plugin: tuple[str, ...]
    sizes: str | None
    footprints: str | None
    threads: str
    precision: str
    quick: bool
    sample_time: float | None
    samples: int
    passes: int | None

    def plan(self, machine: MachineInfo, limits: NodeLimits) -> SweepPlan:
        """The sweep on ``machine`` (its caches), each point within ``limits``; UserError
        naming the first bad option.  User code is loaded (a ``--program`` built) to check it."""
        from ..collectors import plan as planning

        thread_counts = planning.parse_threads(self.threads, limits.threads, limits.threads_are)
        precisions = planning.parse_precisions(self.precision)
        return planning.build_plan(
            machine,
            kernels=planning.sizes.parse_list(self.kernels) if self.kernels else None,
            sizes_spec=self.sizes,
            footprints_spec=self.footprints,
            threads=thread_counts,
            precisions=precisions,
            quick=self.quick,
            sample_time=self.sample_time,
            samples=self.samples,
            passes=self.passes,
            catalog=planning.load_user_code(self.program, self.plugin),
            free_memory=limits.memory_bytes,
        )


def collect(
    kernels: Annotated[
        str | None,
        typer.Option(
            "--kernels",
            "-k",
            help="Comma-separated benchmarks (shallow, stencil2d5, stream.triad...), families "
            "(stream, stencil) or kernels (shallow.cu selects the whole shallow step). "
            "Default: all built-ins and installed plugins; with --program or --plugin, "
            "those.",
        ),
    ] = None,
    program: Annotated[
        list[str] | None,
        typer.Option(
            "--program",
            callback=input_file("--program"),
            help="A TOML spec of your own program (Fortran, C, ...), which times its loops "
            "itself: benchdb builds it, runs it per sample and stores its loops as "
            "<name>.<loop> (docs/programs.md). Repeatable.",
        ),
    ] = None,
    plugin: Annotated[
        list[str] | None,
        typer.Option(
            "--plugin",
            callback=input_file("--plugin", module_ok=True),
            help="A Python module or .py file declaring numba kernels in BENCHDB_KERNELS "
            "(docs/plugins.md); installed plugins (entry points benchdb.kernels) need no "
            "option. Repeatable.",
        ),
    ] = None,
    sizes: Annotated[
        str | None,
        typer.Option(
            help="Explicit shapes instead of the automatic sweep, e.g. 100x100,200x300 "
            "(each benchmark takes those with its number of extents)."
        ),
    ] = None,
    footprints: Annotated[
        str | None,
        typer.Option(
            help="Explicit footprints, e.g. 1MiB,64MiB: each benchmark gets the "
            "square shape nearest each."
        ),
    ] = None,
    threads: Annotated[str, typer.Option(help="Thread counts, e.g. 1,2.")] = "1",
    precision: Annotated[str, typer.Option(help="float64, float32 or both.")] = "float64",
    quick: Annotated[
        bool, typer.Option("--quick", help="Coarse sweep with 5 ms samples: a first look.")
    ] = False,
    time_budget: Annotated[
        float | None,
        typer.Option(
            callback=finite,
            min=0,
            help="Start no point that the estimate says would end more than this many "
            "seconds after the command started (the kernels' checks count); the run is left "
            "interrupted and the same command continues it. Default: 285 for the automatic "
            "sweeps (about 5 minutes in all), none with --sizes or --footprints.",
        ),
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Print the plan (every shape, the largest footprint, the estimated time) "
            "and stop: nothing is compiled, measured or stored.",
        ),
    ] = False,
    caches: Annotated[
        str | None,
        typer.Option(
            help="Plan for these data caches instead of this machine's, smallest level "
            "first, e.g. 48KiB,2MiB,1GiB: with --dry-run, check a plan for a machine "
            "you cannot run on.",
        ),
    ] = None,
    sample_time: Annotated[
        float | None,
        typer.Option(
            callback=finite,
            help="Target length of one sample in seconds (default 0.02; --quick 0.005).",
        ),
    ] = None,
    samples: Annotated[int, typer.Option(help="Samples per point and pass (at least 5).")] = 5,
    passes: Annotated[
        int | None,
        typer.Option(
            help="Passes over the sweep (default 3; --quick 1): each point is measured again, "
            "minutes later, and its statistics pool every pass's samples."
        ),
    ] = None,
    resume: Annotated[
        int | None,
        typer.Option(
            help="Continue this unfinished run (its stored sweep; other sweep "
            "options must be left out)."
        ),
    ] = None,
    tag: Annotated[list[str] | None, typer.Option(help="Label the run (repeatable).")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress, no table.")] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Benchmark the kernels across problem sizes chosen from this machine's caches.

    Sizes run from L1-resident through every cache level, denser around each cache
    capacity (paper 003: performance is looked up by memory footprint), to a few points
    on the memory plateau, up to 3x the last-level cache (--quick: 4x), at most 4 GiB.
    Coarse points over every level run first, then the points between them, then the
    rectangles that calibrate the row-length correction. Before it starts, collect
    prints the estimated time; the automatic sweeps stop starting points after 285 s
    (--time-budget), and the same command continues. --dry-run prints the plan and
    the estimate and stores nothing; with --caches it plans for another machine.
    Every point is committed as it completes; after Ctrl-C, SIGTERM or a
    crash, the same command continues the unfinished run. A finished run is
    never reused: collecting again makes a new run, for regression tracking.
    Each point is measured in 3 passes over the sweep (the second in reverse
    order), at least 5 samples each, all kept: on a shared machine a busy
    spell of another tenant can spoil every sample of one pass. A point whose
    coefficient of variation exceeds 10% is stored with the flag "noisy".
    A sample during which the measuring threads waited for a CPU another task
    held (or the hypervisor stole it) for more than 1% of its time is set aside
    and taken again; a point left with fewer clean samples than one pass asks
    for, over all its passes, is flagged "disturbed". The summary counts both;
    `benchdb measurements show` lists them.

    Before anything is stored, every kernel is checked: compiled code against its
    numpy reference on a small shape, a --program by one run. A wrong kernel is
    refused (exit 2); a collection that stores no valid point exits 1, saying why.
    A point that fails during the sweep (a program that crashes
    at one size, a checksum that differs between passes) is stored invalid, with
    the reason, and never used by `predict`.

    Your own loops: --program runs a program in any language that times its
    loops itself (docs/programs.md); --plugin, or an installed package's
    benchdb.kernels entry point, adds numba kernels (docs/plugins.md).

    Examples:

      benchdb collect --quick

      benchdb collect --dry-run --caches 48KiB,2MiB,1GiB

      benchdb collect --kernels shallow,stream --threads 1,2

      benchdb collect --kernels stream.triad --footprints 16KiB,1MiB,256MiB --json

      benchdb collect --program examples/shallow_fortran/benchdb.toml --quick

      benchdb collect --plugin my_kernels.py --sizes 64x64,512x512
    """
    from ..collectors import plan as planning
    from ..collectors.sweep import SweepObserver, detect_context, run_sweep, verify_plan
    from ..db import resume as resuming

    started = time.monotonic()  # the budget counts the checks and compilation too
    machine = detect_machine()
    if caches is not None:
        machine = machine.with_caches(planning.sizes.parse_caches(caches))
    check_tags(tag)
    if dry_run and resume is not None:
        raise UserError("--dry-run shows a new sweep's plan; leave out --resume")
    if resume is not None:
        if (
            kernels or sizes or footprints or quick or sample_time or passes or threads != "1"
            or precision != "float64" or program or plugin or caches
        ):  # fmt: skip
            raise UserError(
                "--resume continues the run's own sweep; leave out --kernels, --program, "
                "--plugin, --sizes, --footprints, --quick, --threads, --precision, "
                "--sample-time, --passes and --caches"
            )
        database = open_db(db, write=True)  # a run to resume is in a database that exists
        ctx = detect_context()
        config = resuming.check_explicit(
            database, resume, ctx.machine.fingerprint, ctx.environment.fingerprint
        )
        sweep = planning.SweepPlan.from_config(config, planning.reload_user_code(config, resume))
        planning.check_memory(sweep.points)
        checked = verify_plan(sweep)
    else:
        sweep = SweepOptions(
            kernels, tuple(program or ()), tuple(plugin or ()), sizes, footprints, threads,
            precision, quick, sample_time, samples, passes,
        ).plan(machine, planning.NodeLimits.here())  # fmt: skip
        if dry_run:
            rates = measure_rates(machine)
            show_plan(sweep, machine, rates, sweep.time_budget(time_budget), as_json)
            return
        checked = verify_plan(sweep)
        database = open_db(db, create=True)
        ctx = detect_context()
    budget = sweep.time_budget(time_budget)
    silent = quiet or as_json
    # the rates price each point against the budget, and the estimate the bar announces
    rates = None if budget is None and silent else measure_rates(ctx.machine)
    if silent or rates is None:
        observer: SweepObserver | ProgressObserver = SweepObserver()
    else:
        observer = ProgressObserver(
            lambda todo: estimate_line(sweep, todo, estimate(sweep, todo, rates), budget)
        )
    if not silent:
        err_console.print(
            "checked before the sweep (against the reference, or by one run): "
            + ", ".join(dict.fromkeys(c.benchmark for c in checked)),
            highlight=False,
        )
    try:
        result = run_sweep(
            database,
            sweep,
            resume_run=resume,
            time_budget=None if budget is None else max(0.0, budget - (time.monotonic() - started)),
            tags=tag or [],
            observer=observer,
            context=ctx,
            verified=True,
            expected=None if rates is None else partial(pass_seconds, sweep, rates=rates),
        )
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the run is stored as interrupted
        if isinstance(observer, ProgressObserver):
            observer.stop()
        err_console.print(
            "every finished point is stored; run the same command to continue"
            + (f" (or --resume {resume})" if resume is not None else ""),
            highlight=False,
        )
        raise
    if isinstance(observer, ProgressObserver):
        observer.stop()
    report = {**result.__dict__, "database": database.display_url}
    frame = measurements_frame(database, run_ids=[result.run_id])
    rows = summary_rows(frame)
    if as_json:
        print_json({"run": report, "checked": [c.__dict__ for c in checked], "kernels": rows})
    else:
        if not quiet:
            _print_summary(result, rows)
        # the data's quality is neither progress nor table: --quiet still says it
        disturbed = disturbed_line(result.run_id, rows, retaken_samples(frame))
        if disturbed is not None:
            err_console.print(disturbed, highlight=False, soft_wrap=True)
        if not quiet:
            _print_done(database, result)
    failed = _nothing_valid_line(result.run_id, rows)
    if failed is not None:
        err_console.print(failed, highlight=False, soft_wrap=True)
        raise typer.Exit(1)


def _nothing_valid_line(run_id: int, rows: list[dict[str, Any]]) -> str | None:
    """The line a collection that stored points, none of them valid, ends with."""
    if not rows or any(r["valid"] for r in rows):
        return None
    why = "; ".join(dict.fromkeys(", ".join(r["invalid_because"]) for r in rows))
    return (
        f"no point of run {run_id} is valid ({why}); nothing from it will be predicted: "
        f"`benchdb measurements show --run {run_id}` lists the points and their reasons"
    )


def _print_summary(result: SweepResult, rows: list[dict[str, Any]]) -> None:
    print_table(
        [_table_row(r) for r in rows],
        SUMMARY_COLUMNS,
        title=f"run {result.run_id}: {result.status}",
    )


def _print_done(database: Database, result: SweepResult) -> None:
    done = f"{result.measured} point-passes measured in {fmt_seconds(result.elapsed_s)}"
    if result.status == RunStatus.INTERRUPTED:
        err_console.print(
            f"{done}; time budget spent with {result.remaining} point-passes left -- "
            "run the same command to continue"
        )
    else:
        err_console.print(f"{done}; run {result.run_id} complete in {database.display_url}")
