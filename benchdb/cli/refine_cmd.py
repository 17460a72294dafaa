"""``benchdb refine``: measure more sizes where the curves miss by more than the noise.

A thin layer over :func:`benchdb.collectors.refine.refine`: check the options
(bad input exits 2 before the database is opened), print what each round adds
and why, show collect's progress bar, and end with the gaps left.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..errors import UserError
from ..units import fmt_bytes, fmt_seconds
from .collect_cmd import ProgressObserver
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

if TYPE_CHECKING:
    from ..collectors.refine import Added, RefineResult
    from ..predict.refinement import Gap

GAPS_SHOWN = 12


def _make_observer(quiet: bool) -> Any:
    from ..collectors.refine import RefineObserver

    class Observer(ProgressObserver, RefineObserver):
        """collect's progress bar, restarted for each round, after the round's plan."""

        def round_planned(self, index: int, added: Sequence[Added]) -> None:
            self.stop()
            if self.task is not None:  # printed when stopped: the next round starts afresh
                self.progress.remove_task(self.task)
                self.task = None
            if index == 0:
                err_console.print("continuing an unfinished refine run")
                return
            err_console.print(f"round {index}: {len(added)} new shape(s)", highlight=False)
            for a in added:
                err_console.print(
                    f"  + {a.benchmark} {a.shape} ({fmt_bytes(a.footprint_bytes)}): {a.gap.reason}",
                    highlight=False,
                )

    class Silent(RefineObserver):
        def stop(self) -> None:
            """Nothing to stop."""

    return Silent() if quiet else Observer()


def _gap_row(g: Gap) -> dict[str, Any]:
    return {
        "kernel": g.kernel,
        "shape": g.shape,
        "footprint_bytes": g.footprint,
        "log_aspect": g.log_aspect,
        "error_pct": g.error_pct,
        "noise_pct": g.tolerance_pct,
        "flags": list(g.flags),
        "bisectable": bool(g.targets),
    }


def _report(result: RefineResult) -> dict[str, Any]:
    return {
        "stopped": result.stopped,
        "rounds": [
            {
                "round": r.index,
                "run": r.sweep.__dict__,
                "added": [
                    {
                        "benchmark": a.benchmark,
                        "shape": a.shape,
                        "footprint_bytes": a.footprint_bytes,
                        "reason": a.gap.reason,
                    }
                    for a in r.added
                ],
            }
            for r in result.rounds
        ],
        "gaps_left": [_gap_row(g) for g in result.gaps],
    }


def refine(
    kernels: Annotated[
        str,
        typer.Option(
            "--kernels",
            "-k",
            help="Comma-separated benchmarks to refine (shallow, stencil2d5, ...; a kernel "
            "name selects its benchmark), each collected in this environment already.",
        ),
    ],
    time_budget: Annotated[
        float,
        typer.Option(
            callback=finite,
            min=1,
            help="Start no new point after this many seconds; an unfinished round is "
            "continued by the next `benchdb refine`.",
        ),
    ] = 300.0,
    rounds: Annotated[
        int, typer.Option(min=1, max=100, help="At most this many rounds (12 shapes each).")
    ] = 10,
    method: Annotated[
        str, typer.Option(help="The interpolation method whose misses decide (see predict).")
    ] = "pchip",
    threads: Annotated[int, typer.Option(min=1, help="The thread count to refine.")] = 1,
    precision: Annotated[str, typer.Option(help="float64 or float32.")] = "float64",
    passes: Annotated[
        int, typer.Option(min=1, max=10, help="Passes per new point (its repeat noise).")
    ] = 3,
    sample_time: Annotated[
        float,
        typer.Option(
            callback=finite, min=0.0001, max=60, help="Target length of one sample in seconds."
        ),
    ] = 0.02,
    plugin: Annotated[
        list[str] | None,
        typer.Option(
            callback=input_file("--plugin", module_ok=True),
            help="A plugin module or .py file, as for collect (repeatable).",
        ),
    ] = None,
    program: Annotated[
        list[str] | None,
        typer.Option(
            callback=input_file("--program"),
            help="A program's TOML spec, as for collect (repeatable).",
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress, no table.")] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Measure new sizes where the predictions miss by more than measuring again would.

    Each round leaves every measured shape out in turn and asks the rest for it, as
    `benchdb validate` does. Where the answer misses by more than that shape's repeat
    noise (at least the kernel's median noise), refine measures the sizes that bisect
    the span it was interpolated across: for a square, halfway in log footprint to
    each neighbour; for a rectangle, the row-length correction halfway along the
    footprint and halfway along the row length. Rounds go on until every miss is
    within the noise, the remaining spans are narrower than 1/8 octave, the rounds
    are done or the time budget is spent.

    A miss that no bisection removes is a size unlike its neighbours -- a
    cache-thrashing dip or a spike. It stays measured and flagged: `predict` names
    the flag in every answer near it, and `benchdb advise` proposes padded shapes
    that avoid it.

    The new points are stored as runs tagged "refine" and join the curves of
    `predict` and `validate`. Every point is committed as it completes; after Ctrl-C,
    or when the budget runs out, the same command continues the unfinished round.

    Examples:

      benchdb collect --kernels shallow && benchdb refine --kernels shallow

      benchdb refine -k stencil2d5,jacobi2d --time-budget 120 --json
    """
    from ..collectors import plan as planning
    from ..collectors.refine import RefineSettings
    from ..collectors.refine import refine as run_refine
    from ..collectors.sweep import detect_context
    from ..predict.methods import METHODS

    names = planning.sizes.parse_list(kernels)
    if not names:
        raise UserError("--kernels is empty; name the benchmarks to refine, e.g. --kernels shallow")
    METHODS.get(method)
    precisions = planning.parse_precisions(precision)
    if len(precisions) != 1:
        raise UserError(f"--precision {precision!r}: refine one precision at a time")
    thread_counts = planning.parse_threads(str(threads), planning.thread_limit())
    catalog = planning.load_user_code(program or [], plugin or [])
    benches = planning.select_benchmarks(names, catalog)
    planning.check_support(benches, thread_counts, precisions)
    settings = RefineSettings(
        method=method,
        threads=thread_counts[0],
        precision=precisions[0],
        time_budget=time_budget,
        max_rounds=rounds,
        passes=passes,
        sample_time=sample_time,
    )
    database = open_db(db, write=True)
    observer = _make_observer(quiet or as_json)
    try:
        result = run_refine(database, benches, settings, detect_context(), catalog, observer)
    finally:
        observer.stop()
    report = _report(result)
    if as_json:
        print_json(report)
        return
    if quiet:
        return
    measured = sum(r.sweep.measured for r in result.rounds)
    elapsed = sum(r.sweep.elapsed_s for r in result.rounds)
    added = sum(len(r.added) for r in result.rounds)
    if result.gaps:
        print_table(
            [
                {**row, "bisect": "yes" if row["bisectable"] else "no (narrowest span)"}
                for row in report["gaps_left"][:GAPS_SHOWN]
            ],
            [
                ("kernel", "kernel", None),
                ("shape", "left-out shape", None),
                ("footprint_bytes", "footprint", fmt_bytes),
                ("error_pct", "miss", lambda v: f"{v:+.1f}%"),
                ("noise_pct", "noise", lambda v: f"{v:.1f}%"),
                ("flags", "flags", lambda v: ",".join(v)),
                ("bisect", "can bisect", None),
            ],
            title=f"gaps left: {len(result.gaps)} (worst {min(GAPS_SHOWN, len(result.gaps))})",
        )
    err_console.print(
        f"{added} shape(s) added, {measured} point-passes measured in {fmt_seconds(elapsed)}; "
        f"stopped: {result.stopped}",
        highlight=False,
    )
