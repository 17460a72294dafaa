"""``benchdb report``: write a static HTML report (no server needed)."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import track

from ..regress import DETECTORS
from ..report import check_report_folder, write_report
from .common import (
    DbOption,
    ForceOption,
    HostOption,
    JsonOption,
    MachineOption,
    console,
    err_console,
    open_db,
    print_json,
)


def report(
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Folder for index.html and plotly.min.js (created).")
    ],
    inline: Annotated[
        bool,
        typer.Option("--inline", help="Put plotly.js inside index.html: one self-contained file."),
    ] = False,
    detector: Annotated[
        str, typer.Option("--detector", help=f"History detector: {' or '.join(DETECTORS.names())}.")
    ] = "potts",
    machine: MachineOption = None,
    host: HostOption = None,
    force: ForceOption = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Write an HTML report of a node class's (or --host's) newest kernel collection.

    It compares the newest complete `benchdb collect` run with the pinned
    baseline when that has the same settings, else with the newest earlier
    collection of the same settings, and says which runs it took and why
    (populated-node calibrations, app and comm runs, and sweeps of other sizes
    are never compared with it).  The page shows the verdict and every kernel's
    change, then per kernel: performance by footprint with the prediction, the
    change per point, the history with its steps; then the communication
    models.  Charts are interactive (hover, zoom) and need no server or network.

    Examples:

        benchdb report --out report/

        benchdb baseline set 12 && benchdb report --out report/ --detector zscore

        benchdb report --out /tmp/r --inline      # one file to attach or mail

        benchdb report --out node07/ --host node07
    """
    check_report_folder(out, inline, force)
    written = write_report(
        open_db(db),
        out,
        machine=machine,
        host=host,
        inline=inline,
        detector=detector,
        force=force,
        track=partial(track, console=err_console, transient=True),
    )
    if as_json:
        print_json({**written.to_dict(), "folder": str(out.resolve())})
    else:
        pick = written.pick
        against = f"against run {pick.baseline.run_id}" if pick.baseline is not None else "alone"
        err_console.print(f"run {pick.collection.run_id} {against}: {pick.reason}")
        console.print(f"report written: {written.index.resolve().as_uri()}")
