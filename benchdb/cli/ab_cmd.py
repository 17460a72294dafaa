"""``benchdb ab``: measure a base and a change in one run, and judge their paired samples.

A thin layer over :func:`benchdb.collectors.ab.coordinator.run_ab` (measuring) and
:func:`benchdb.regress.paired.judge_pair` (judging): parse and check the options
(bad input exits 2 before a worker starts or a database is created), show
progress, print the verdicts as a table, JSON or Markdown.
"""

from __future__ import annotations

import sys
from dataclasses import asdict
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..db.runstate import RunStatus
from ..errors import UserError
from ..units import fmt_bytes, fmt_change, fmt_interval, fmt_seconds
from ..verdicts import MOVED, Verdict
from .common import (
    DbOption,
    JsonOption,
    console,
    err_console,
    finite,
    input_file,
    open_db,
    print_json,
    print_table,
)

if TYPE_CHECKING:
    from ..collectors.ab.coordinator import AbResult
    from ..regress.paired import AbJudgement

EXIT_WORKER_DIED = 3

VERDICT_COLUMNS = [
    ("kernel", "kernel", None),
    ("setting", "setting", None),
    ("points", "points", None),
    ("pairs", "pairs", None),
    ("change", "change", None),
    ("interval", "99% interval", None),
    ("verdict", "verdict", None),
    ("disturbed_points", "disturbed", None),
]


def _env(values: list[str] | None, option: str) -> dict[str, str]:
    out = {}
    for item in values or []:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise UserError(f"{option} {item!r}: write NAME=VALUE, e.g. {option} NUMBA_OPT=0")
        out[name.strip()] = value
    return out


def _rows(judged: AbJudgement) -> list[dict[str, Any]]:
    return [
        {
            **k.__dict__,
            "setting": f"{k.precision} {k.threads}t",
            "change": fmt_change(k.ratio),
            "interval": fmt_interval(k.ci_low, k.ci_high),
        }
        for k in judged.kernels
    ]


def ab_markdown(result: AbResult, judged: AbJudgement, labels: dict[str, str]) -> str:
    """The verdicts as a pull-request comment: the heading says whether anything got
    slower; the table lists every kernel."""
    slower = judged.slower
    head = (
        f"### :x: {len(slower)} kernel(s) slower"
        if slower
        else "### :white_check_mark: no kernel slower"
    )
    lines = [
        head,
        "",
        f"`benchdb ab`, {result.order} order, threshold {judged.threshold:.0%}, "
        f"{judged.confidence:.0%} intervals; base run {result.runs['base']} "
        f"({labels['base']}), change run {result.runs['change']} ({labels['change']}).",
        "",
        "| kernel | setting | points | change | 99% interval | verdict |",
        "|---|---|---|---|---|---|",
    ]
    order = {
        v: i for i, v in enumerate((*MOVED, Verdict.NOISY, Verdict.DISTURBED, Verdict.UNCHANGED))
    }
    for row in sorted(_rows(judged), key=lambda r: (order[r["verdict"]], r["kernel"])):
        verdict = f"**{row['verdict']}**" if row["verdict"] == Verdict.SLOWER else row["verdict"]
        lines.append(
            f"| {row['kernel']} | {row['setting']} | {row['points']} | {row['change']} "
            f"| {row['interval']} | {verdict} |"
        )
    return "\n".join(lines)


def ab(
    base_python: Annotated[
        str,
        typer.Option(
            help="The Python that runs the base side (a virtualenv's, with its benchdb and "
            "plug-ins). Default: this one.",
            rich_help_panel="Sides",
        ),
    ] = sys.executable,
    change_python: Annotated[
        str,
        typer.Option(help="The Python that runs the change side.", rich_help_panel="Sides"),
    ] = sys.executable,
    base_env: Annotated[
        list[str] | None,
        typer.Option(
            help="NAME=VALUE set for the base side only (repeatable).", rich_help_panel="Sides"
        ),
    ] = None,
    change_env: Annotated[
        list[str] | None,
        typer.Option(
            help="NAME=VALUE set for the change side only (repeatable), e.g. NUMBA_OPT=0.",
            rich_help_panel="Sides",
        ),
    ] = None,
    base_program: Annotated[
        list[str] | None,
        typer.Option(
            callback=input_file("--base-program"),
            help="A program spec (docs/programs.md) the base side builds and runs: the "
            "base build of your program (repeatable).",
            rich_help_panel="Sides",
        ),
    ] = None,
    change_program: Annotated[
        list[str] | None,
        typer.Option(
            callback=input_file("--change-program"),
            help="The change side's spec of the same program (same loop names).",
            rich_help_panel="Sides",
        ),
    ] = None,
    base_plugin: Annotated[
        list[str] | None,
        typer.Option(
            callback=input_file("--base-plugin", module_ok=True),
            help="A plugin module or .py file (docs/plugins.md) only the base side loads.",
            rich_help_panel="Sides",
        ),
    ] = None,
    change_plugin: Annotated[
        list[str] | None,
        typer.Option(
            callback=input_file("--change-plugin", module_ok=True),
            help="The change side's variant of the plugin (declaring the same kernel names).",
            rich_help_panel="Sides",
        ),
    ] = None,
    program: Annotated[
        list[str] | None,
        typer.Option(
            callback=input_file("--program"),
            help="A program spec both sides run (repeatable).",
            rich_help_panel="Sides",
        ),
    ] = None,
    plugin: Annotated[
        list[str] | None,
        typer.Option(
            callback=input_file("--plugin", module_ok=True),
            help="A plugin both sides load (repeatable).",
            rich_help_panel="Sides",
        ),
    ] = None,
    kernels: Annotated[
        str | None,
        typer.Option(
            "--kernels",
            "-k",
            help="Comma-separated benchmarks, families or kernels, as for collect. Default: "
            "all, or the programs and plugins given.",
        ),
    ] = None,
    sizes: Annotated[
        str | None,
        typer.Option(help="Explicit shapes, e.g. 64x64,512x512, instead of the default set."),
    ] = None,
    footprints: Annotated[
        str | None,
        typer.Option(
            help="Explicit footprints, e.g. 32KiB,1MiB,32MiB. Default: an eighth, a quarter "
            "and half of each data cache, half of the last one at most 32 MiB (nine sizes a "
            "kernel on three caches)."
        ),
    ] = None,
    precision: Annotated[str, typer.Option(help="float64 or float32.")] = "float64",
    threads: Annotated[int, typer.Option(min=1, help="Threads per side.")] = 1,
    order: Annotated[
        str | None,
        typer.Option(
            help="duet: both sides measure at once, each pinned to its own CPUs, pairs started "
            "together (needs 2x --threads CPUs); interleaved: one side after the other, "
            "in a random order per pair. Default: interleaved.",
        ),
    ] = None,
    pairs: Annotated[int, typer.Option(help="Clean sample pairs per trial (at least 5).")] = 5,
    trials: Annotated[
        int,
        typer.Option(
            min=1,
            help="Trials per point: each prepares the point afresh on both sides (new "
            "arrays), so where they land in memory is sampled too.",
        ),
    ] = 6,
    processes: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Pairs of worker processes, each pair placed in memory its own way (alike "
            "on both sides); a point's trials take turns on them. Default: one per trial, "
            "at most 3.",
        ),
    ] = None,
    sample_time: Annotated[
        float, typer.Option(callback=finite, help="Target length of one sample in seconds.")
    ] = 0.01,
    threshold: Annotated[
        float, typer.Option(callback=finite, help="Smallest change reported, in percent.")
    ] = 3.0,
    time_budget: Annotated[
        float | None,
        typer.Option(
            callback=finite,
            min=0,
            help="Start no point after this many seconds; the runs are left interrupted and "
            "the same command continues them.",
        ),
    ] = None,
    tag: Annotated[list[str] | None, typer.Option(help="Label both runs (repeatable).")] = None,
    markdown: Annotated[
        bool, typer.Option("--markdown", help="Print the verdicts as Markdown (a CI comment).")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress.")] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Measure a base and a change in one run, and say which kernels got slower.

    Each side runs in worker processes of its own, with its own Python, environment
    variables, plugins or program build. Both sides check every kernel against its
    numpy reference, then measure the same points: per point, in each of 6 trials
    (each prepares the point afresh, on the next of up to 3 pairs of workers placed
    in memory each its own way), the base calibrates the repetitions and both
    sides take sample pairs, either at once on two cores
    (duet; Bulej et al., ICPE 2020) or one after the other in a random order per
    pair (interleaved; RMIT, Abedi & Brecht, ICPE 2017), so drift and neighbours
    hit both halves of a pair alike. A pair in which either sample lost its CPU
    to another task is retaken on both sides.

    Per kernel, the median over its points of the paired ratios change/base, with
    a 99% bootstrap interval over points and pairs: slower when the interval lies
    above 1 and the change exceeds the threshold (3%), faster alike, unchanged
    when the interval lies within the threshold, noisy otherwise; disturbed
    when too few samples ran undisturbed to judge (that fails nothing).

    The sides are stored as two runs, tagged ab:base and ab:change and linked, so
    `compare`, `history` and `report` show them. Every point is committed on both
    sides at once; after Ctrl-C or a crash the same command continues.

    Exit status: 0 no kernel slower, 1 a kernel slower, 2 bad input (nothing is
    created), 3 a worker died mid-run (the same command continues).

    Examples:

      benchdb ab --change-env NUMBA_OPT=0 --kernels stream.triad

      benchdb ab --base-python ../main/.venv/bin/python --change-python .venv/bin/python

      benchdb ab --base-program build-main/benchdb.toml --change-program build-pr/benchdb.toml

      benchdb ab --base-plugin old_kernels.py --change-plugin new_kernels.py --markdown
    """
    from ..collectors.ab.coordinator import default_footprints, run_ab
    from ..collectors.ab.pairing import choose_order, choose_processes
    from ..collectors.ab.process import WorkerDied
    from ..collectors.ab.protocol import PlanRequest, Side
    from ..collectors.plan import MIN_SAMPLES, parse_precisions
    from ..collectors.sizes import parse_list
    from ..regress.compare import check_threshold
    from ..regress.paired import judge_pair

    if markdown and as_json:
        raise UserError("give --json or --markdown, not both")
    check_threshold(threshold / 100, "--threshold")
    if pairs < MIN_SAMPLES:
        raise UserError(f"--pairs {pairs} is too few; at least {MIN_SAMPLES}")
    if len(parse_precisions(precision)) != 1:
        raise UserError("--precision takes one precision per comparison, e.g. float64")
    if sizes and footprints:
        raise UserError("give either --sizes or --footprints, not both")
    if tag and not all(t.strip() for t in tag):
        raise UserError("--tag is empty; give each a label, e.g. --tag pr-123")
    chosen, note = choose_order(order, threads)
    sides = {
        "base": Side(
            "base", base_python, _env(base_env, "--base-env"),
            tuple([*(program or []), *(base_program or [])]),
            tuple([*(plugin or []), *(base_plugin or [])]),
        ),
        "change": Side(
            "change", change_python, _env(change_env, "--change-env"),
            tuple([*(program or []), *(change_program or [])]),
            tuple([*(plugin or []), *(change_plugin or [])]),
        ),
    }  # fmt: skip
    if not sizes and not footprints:
        from ..machine import detect_machine

        footprints = default_footprints(detect_machine())
    request = PlanRequest(
        kernels=tuple(parse_list(kernels)) if kernels else None,
        sizes=sizes,
        footprints=footprints,
        precision=precision,
        threads=threads,
        sample_time=sample_time,
        pairs=pairs,
        trials=trials,
        processes=choose_processes(processes, trials),
    )
    silent = quiet or as_json or markdown
    if note and not silent:
        err_console.print(note, highlight=False)
    observer = None if silent else _Progress(sides)
    try:
        result = run_ab(
            lambda: open_db(db, create=True),
            sides,
            request,
            order=chosen,
            time_budget=time_budget,
            tags=tag or [],
            observer=observer,
        )
    except WorkerDied as exc:
        err_console.print(
            f"{exc}; every finished point is stored; run the same command to continue",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(EXIT_WORKER_DIED) from None
    except KeyboardInterrupt:
        err_console.print("every finished point is stored; run the same command to continue")
        raise
    judged = judge_pair(open_db(db), result.runs["base"], result.runs["change"], threshold / 100)
    if as_json:
        print_json({"run": asdict(result), "judgement": asdict(judged)})
    elif markdown:
        typer.echo(ab_markdown(result, judged, {s: sides[s].label() for s in sides}))
    else:
        _print(result, judged)
    if judged.slower:
        raise typer.Exit(1)


class _Progress:
    """One line per point on stderr, printed between points (never from a thread of its
    own, which would compete with the samples for a CPU)."""

    def __init__(self, sides: dict[str, Any]) -> None:
        self.sides = sides
        self.done = 0
        self.todo = 0

    def started(self, runs: Any, todo: int, stored: int, resumed: bool) -> None:
        self.todo = todo
        verb = f"continuing runs {runs['base']} and {runs['change']} ({stored} points stored)"
        err_console.print(
            (verb if resumed else f"base run {runs['base']}, change run {runs['change']}")
            + f": {todo} points on both sides; base: {self.sides['base'].label()}; "
            f"change: {self.sides['change'].label()}",
            highlight=False,
            soft_wrap=True,
        )

    def point_started(self, point: Any) -> None:
        self.done += 1
        err_console.print(
            f"[{self.done}/{self.todo}] {point.benchmark} "
            f"{'x'.join(map(str, point.shape))} ({fmt_bytes(point.footprint_bytes)})",
            highlight=False,
        )

    def point_finished(self, point: Any) -> None:
        """Nothing: the next point's line follows."""


def _print(result: AbResult, judged: AbJudgement) -> None:
    print_table(
        _rows(judged),
        VERDICT_COLUMNS,
        title=f"change run {result.runs['change']} vs base run {result.runs['base']} "
        f"({result.order}, threshold {judged.threshold:.0%})",
    )
    counts: dict[str, int] = {}
    for k in judged.kernels:
        counts[k.verdict] = counts.get(k.verdict, 0) + 1
    console.print("kernels: " + ", ".join(f"{n} {v}" for v, n in sorted(counts.items())))
    if judged.invalid_points:
        err_console.print(
            f"{judged.invalid_points} point(s) invalid on a side, left out: "
            f"`benchdb measurements show --run {result.runs['change']}` says why"
        )
    done = f"{result.measured} points measured on both sides in {fmt_seconds(result.elapsed_s)}"
    if result.status == RunStatus.INTERRUPTED:
        err_console.print(
            f"{done}; time budget spent with {result.remaining} points left -- run the same "
            "command to continue"
        )
    else:
        err_console.print(
            f"{done}; runs {result.runs['base']} and {result.runs['change']} in {result.database}"
        )
