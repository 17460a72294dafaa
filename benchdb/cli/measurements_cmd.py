"""``benchdb measurements show``: stored points in human units (or ``--json``, SI)."""

from __future__ import annotations

import math
from typing import Annotated, Any

import typer

from ..bounds import parse_run_id
from ..db.engine import Database
from ..db.measurements import kernel_names, measurements_frame
from ..db.prune import pruned_note, pruned_runs
from ..db.runs import run_exists
from ..db.scope import read_scope
from ..db.transfer import frame_records
from ..errors import UserError
from ..evidence import lost_share, set_aside_count
from ..units import fmt_bytes, fmt_rate, fmt_seconds
from .common import (
    DbOption,
    HostOption,
    JsonOption,
    MachineOption,
    err_console,
    open_db,
    print_json,
    print_table,
)
from .groups import HelpGroup

app = typer.Typer(help="Read stored measurements.", no_args_is_help=True, cls=HelpGroup)

JSON_FIELDS = (
    "run_id", "kernel", "kernel_version", "shape", "points", "footprint_bytes", "threads",
    "placement", "precision", "context", "repetitions", "samples", "t_min", "t_median",
    "t_iqr", "t_cv", "flop_rate", "byte_rate", "checksum", "valid", "flags", "evidence",
    "set_aside",
)  # fmt: skip

COLUMNS = [
    ("kernel", "kernel", None),
    ("footprint_bytes", "footprint", fmt_bytes),
    ("shape_key", "shape", None),
    ("threads", "threads", None),
    ("precision", "precision", None),
    ("t_median", "median", fmt_seconds),
    ("rate", "rate", None),
    ("t_cv", "CV", lambda v: f"{100 * v:.1f}%"),
    ("lost", "lost", lambda v: f"{100 * v:.1f}%"),
    ("set_aside", "set aside", lambda v: str(set_aside_count(v))),
    ("flags", "flags", lambda v: ",".join(v) or "-"),
]


def _present(value: Any) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def rate_text(row: dict[str, Any]) -> str:
    """flop/s where the kernel counts flops, else B/s (copies), else '-' (halo updates);
    'INVALID' for a point that failed its checks (the flags say why)."""
    if row.get("valid") is False:
        return "INVALID"
    if _present(row.get("flop_rate")):
        return fmt_rate(row["flop_rate"], "flop/s")
    if _present(row.get("byte_rate")):
        return fmt_rate(row["byte_rate"], "B/s")
    return "-"


def split(values: list[str] | None) -> list[str]:
    """Repeated and comma-separated option values as one list."""
    return [v.strip() for item in values or [] for v in item.split(",") if v.strip()]


def parse_run(text: str | None) -> int | None:
    """A ``--run`` value: a run id, or None for ``all`` or none given."""
    if text is None or text == "all":
        return None
    return parse_run_id(text, "--run")


def check_kernels(database: Database, names: list[str]) -> None:
    """UserError naming the stored kernels when one asked for is unknown."""
    known = kernel_names(database)
    unknown = [n for n in names if n not in known]
    if unknown:
        listing = ", ".join(sorted(known)) or "none yet -- run `benchdb collect --quick`"
        raise UserError(f"no kernel {', '.join(unknown)} in the database; known: {listing}")


@app.command()
def show(
    kernel: Annotated[
        list[str] | None,
        typer.Option("--kernel", "-k", help="Kernel name, e.g. shallow.cu (repeat or a,b)."),
    ] = None,
    run: Annotated[
        str | None,
        typer.Option(help="Run id, or 'all'. Default: the latest run with matching points."),
    ] = None,
    machine: MachineOption = None,
    host: HostOption = None,
    threads: Annotated[int | None, typer.Option(min=1, help="Only this thread count.")] = None,
    precision: Annotated[str | None, typer.Option(help="Only float64 or float32.")] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show measured points by footprint: median time, rate, CV, evidence and flags.

    LOST is the median share of its wall time a kept sample spent waiting for a
    CPU another task held (or stolen by the hypervisor); SET ASIDE counts the
    samples that lost more than 1% and were taken again; a point left short of
    clean samples is flagged `disturbed`.  `--json` gives each sample's evidence, field by field.
    A run whose raw samples `benchdb db prune` dropped keeps its statistics and says
    when (`samples_pruned_at`).

    An invalid point (its program failed there, its checksum changed between
    passes, it was not finite) shows as INVALID, its flags saying why; `predict`
    never uses it.

    Examples:

      benchdb measurements show --kernel shallow.cu

      benchdb measurements show -k stream.triad,stream.copy --run 3 --json

      benchdb measurements show -k stream.triad --host node07
    """
    database = open_db(db)
    kernels = split(kernel)
    run_id = parse_run(run)
    if run_id is not None and not run_exists(database, run_id):
        raise UserError(f"no run {run_id} in the database; `benchdb runs list` shows the runs")
    if kernels:
        check_kernels(database, kernels)
    scope = None
    if machine is not None or host is not None or run_id is None:
        scope = read_scope(database, machine, host)
    frame = measurements_frame(
        database,
        kernels=kernels or None,
        run_ids=[run_id] if run_id is not None else None,
        scope=scope,
        threads=[threads] if threads is not None else None,
        precision=precision,
    )
    if run is None and not frame.empty:
        frame = frame[frame["run_id"] == frame["run_id"].max()]
    frame = frame.sort_values(["kernel", "precision", "threads", "footprint_bytes"])
    pruned = pruned_runs(database, {int(r) for r in frame["run_id"]})
    rows = [
        {**r, "samples_pruned_at": pruned.get(r["run_id"])}
        for r in frame_records(frame, JSON_FIELDS)
    ]
    if as_json:
        print_json(rows)
        return
    if not rows:
        err_console.print("no measurements match; `benchdb runs list` shows what is stored")
        return
    print_table(
        [
            {
                **r,
                "rate": rate_text(r),
                "shape_key": "x".join(map(str, r["shape"])),
                "t_median": r["t_median"] if r["samples"] or r["samples_pruned_at"] else None,
                "lost": lost_share(r["evidence"]),
            }
            for r in rows
        ],
        COLUMNS,
        title=f"run {', '.join(map(str, sorted(set(frame['run_id']))))}",
    )
    for run_id, when in sorted(pruned.items()):
        err_console.print(
            f"{pruned_note(run_id, when)}: its statistics stay, its evidence and set-aside "
            "samples went with them"
        )
