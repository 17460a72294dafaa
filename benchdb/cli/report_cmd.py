"""``benchdb report``: write a static HTML report (no server needed)."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import track

from ..regress import DETECTORS
from ..report import write_report
from .common import DbOption, JsonOption, console, err_console, open_db, print_json
from .compare_cmd import MachineOption


def report(
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Folder for index.html and img/ (created).")
    ],
    image_format: Annotated[
        str, typer.Option("--format", help="Image format the page shows: png or svg.")
    ] = "png",
    inline: Annotated[
        bool,
        typer.Option("--inline", help="Embed the images in index.html (one self-contained file)."),
    ] = False,
    detector: Annotated[
        str, typer.Option("--detector", help=f"History detector: {' or '.join(DETECTORS)}.")
    ] = "potts",
    machine: MachineOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Write an HTML report of one machine: latest comparison, footprint curves, history.

    The newest run is compared with the pinned baseline (else the run before
    it); every kernel of the newest run gets a performance-vs-footprint plot
    with the cache sizes marked; with two or more runs, every kernel gets a
    history plot with its detected steps.  Figures are written as PNG and SVG
    in DIR/img; open DIR/index.html in a browser, no server needed.

    Examples:

        benchdb report --out report/

        benchdb report --out /tmp/r --format svg --inline
    """
    index = write_report(
        open_db(db),
        out,
        machine=machine,
        image_format=image_format,
        inline=inline,
        detector=detector,
        track=partial(track, console=err_console, transient=True),
    )
    if as_json:
        print_json({"index": str(index.resolve()), "folder": str(out.resolve())})
    else:
        console.print(f"report written: {index.resolve().as_uri()}")
