"""``benchdb predict``: how long will this loop take at this size on this machine?

Imports stay lean (no pandas, no scipy once a fit is stored, never numba) so
that a prediction answers in well under a second from a cold start.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import UserError
from ..units import fmt_bytes, fmt_rate, fmt_seconds
from .common import (
    DbOption,
    HostOption,
    JsonOption,
    MachineOption,
    console,
    emit,
    input_file,
    open_db,
    print_json,
)

KernelOption = Annotated[str, typer.Option("--kernel", "-k", help="Kernel, e.g. shallow.cu.")]
ThreadsOption = Annotated[int, typer.Option("--threads", "-t", help="Thread count (measured).")]
PrecisionOption = Annotated[str, typer.Option("--precision", help="float64 or float32.")]
MethodOption = Annotated[
    str,
    typer.Option(
        "--method",
        "-m",
        help="pchip (default), linear, or logcurve where `benchdb validate` marks it best.",
    ),
]
EnvOption = Annotated[
    int | None,
    typer.Option("--environment", help="Environment id (default: newest with data)."),
]
ContextOption = Annotated[
    str | None,
    typer.Option("--context", help="fullstep or isolated (default: fullstep if measured)."),
]


MAX_RANGE_COUNT = 10_000
"""Shapes one ``--range`` may ask for: more is a typo, not a question."""


def parse_range(text: str, ndim: int) -> list[tuple[int, ...]]:
    """'100x100:1000x1000:10' -> 10 shapes spaced geometrically from first to last."""
    import numpy as np

    from ..shapes import parse_shape

    parts = text.split(":")
    if len(parts) != 3 or not parts[2].isdigit() or not 1 <= int(parts[2]) <= MAX_RANGE_COUNT:
        raise UserError(
            f"range {text!r} is not like 100x100:1000x1000:10 (first:last:count, count from 1 "
            f"to {MAX_RANGE_COUNT})"
        )
    a, b = np.array(parse_shape(parts[0], ndim)), np.array(parse_shape(parts[1], ndim))
    grid = np.rint(np.geomspace(a, b, int(parts[2]))).astype(int)
    return [tuple(int(v) for v in row) for row in grid]


def read_shapes_file(path: Path, ndim: int) -> list[tuple[int, ...]]:
    """One shape per line ('600x400', or '600,400' / '600 400'); '#' starts a comment."""
    from ..shapes import parse_shape

    try:
        lines = path.read_text().splitlines()
    except OSError as exc:
        raise UserError(f"cannot read shapes file {path}: {exc.strerror}") from exc
    except UnicodeDecodeError:
        raise UserError(
            f"shapes file {path} is not text; write one shape per line, e.g. 600x400"
        ) from None
    shapes = []
    for line in lines:
        text = line.split("#")[0].strip().replace(",", "x").replace(" ", "x")
        if text:
            shapes.append(parse_shape("x".join(filter(None, text.split("x"))), ndim))
    if not shapes:
        raise UserError(f"shapes file {path} holds no shapes; write one per line, e.g. 600x400")
    return shapes


def _fmt_rel(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def predict(
    kernel: KernelOption,
    shape: Annotated[
        list[str] | None, typer.Option("--shape", "-s", help="Problem shape MxN[xK]; repeatable.")
    ] = None,
    shapes_file: Annotated[
        Path | None,
        typer.Option(
            "--shapes-file",
            callback=input_file("--shapes-file"),
            help="File with one shape per line.",
        ),
    ] = None,
    shape_range: Annotated[
        str | None,
        typer.Option("--range", help="FIRST:LAST:COUNT, e.g. 100x100:1000x1000:10 (geometric)."),
    ] = None,
    iterations: Annotated[
        int, typer.Option("--iterations", "-n", help="Time steps N_itr (paper 003 eq. 8).")
    ] = 1,
    threads: ThreadsOption = 1,
    method: MethodOption = "pchip",
    precision: PrecisionOption = "float64",
    machine: MachineOption = None,
    host: HostOption = None,
    environment: EnvOption = None,
    context: ContextOption = None,
    speedup: Annotated[
        bool,
        typer.Option(
            "--speedup",
            help="Report thread scaling instead: speedup per cache level and Amdahl's "
            "parallel fraction (needs 1 thread and more measured).",
        ),
    ] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Predict a loop's time from the measured performance-by-footprint curve.

    T = flops per point x points x iterations / P(footprint) (paper 003 eq. 8-9);
    P is interpolated between the footprints measured by `benchdb collect`.
    Every answer names the layer that answered it ("layer": same_rows =
    measured blocks with the shape's own row length, aspect = the curve with
    the row-length correction, curve = the square curve alone; --method
    chooses the curve's interpolation in every layer but same_rows), the
    bracketing measured footprints, an uncertainty from the samples' spread
    ("± spread"), the interpolation error there ("± interp": the method's
    leave-one-out error at those footprints, large where the curve bends
    between them), flags of pathological points, and whether it extrapolates.
    The points of every host of this machine's node class pool (identical nodes,
    and this node before and after an OS update); --host uses one host's only.

    Methods: pchip and linear interpolate between the measured points, so they
    follow every cache step the sweep measured.  logcurve (paper 003 eq. 10) is
    a fit, not an interpolation: one log-linear rise to a peak, one fall to the
    memory plateau, flat beyond.  It is the right choice exactly when the
    measured curve has that one-peak shape (no second step, no L3 shoulder) or
    the points are too few or noisy to pass through, and the test is `benchdb
    validate -k KERNEL`: choose logcurve for a kernel where it is marked best
    (*) there; elsewhere keep pchip.  Its fit error is in --json (fit_rms_rel).

    Examples:

      benchdb predict --kernel shallow.cu --shape 500x500 --iterations 1000

      benchdb predict -k stencil2d5 -s 600x400 -s 2000x2000 --method logcurve --json

      benchdb predict -k shallow.z --range 64x64:2048x2048:12 --threads 2

      benchdb predict -k stencil2d5 --speedup

      benchdb predict -k shallow.cu -s 500x500 --machine node07 --host node07
    """
    from ..kernel_defs import builtin_definition
    from ..predict.basis import rate_basis
    from ..predict.methods import METHODS
    from ..predict.predictions import predict_columns

    METHODS.get(method)  # every option is checked before the database is opened
    if threads < 1:
        raise UserError(f"--threads {threads} must be at least 1")
    # a built-in kernel is checked before the database is opened; a user's is defined by it
    database = None if builtin_definition(kernel) else open_db(db)
    basis = rate_basis(kernel, precision, database)
    if speedup:
        from ..predict.threads import thread_scaling

        report = thread_scaling(
            database or open_db(db),
            kernel,
            precision=precision,
            machine=machine,
            host=host,
            environment_id=environment,
            context=context,
            basis=basis,
        )
        _print_speedup(report, as_json)
        return
    ndim = basis.geometry.ndim
    from ..shapes import parse_shape

    shapes = [parse_shape(s, ndim) for s in shape or []]
    if shapes_file is not None:
        shapes += read_shapes_file(shapes_file, ndim)
    if shape_range is not None:
        shapes += parse_range(shape_range, ndim)
    if not shapes:
        raise UserError(
            "give at least one shape: --shape 600x400, --shapes-file F or --range A:B:N"
        )
    if iterations < 1:
        raise UserError(f"--iterations must be at least 1, not {iterations}")
    database = database or open_db(db)
    lookup, predictions = predict_columns(
        database,
        kernel,
        shapes,
        iterations=iterations,
        basis=basis,
        threads=threads,
        method=method,
        precision=precision,
        machine=machine,
        host=host,
        environment_id=environment,
        context=context,
    )
    rows = predictions.rows()
    if as_json:
        print_json({"lookup": lookup.describe(), "predictions": rows})
        return
    d = lookup.describe()
    unit = d["rate_unit"]
    for r in rows:
        beyond = " (beyond measured)" if r["aspect_extrapolated"] else ""
        r["rows"] = f"{math.exp(r['log_aspect']):.2f}{beyond}"
    emit(
        rows,
        [
            ("shape", "shape", None),
            ("footprint_bytes", "footprint", fmt_bytes),
            ("layer", "layer", None),
            ("rate", "rate", lambda v: fmt_rate(v, unit)),
            ("time_s", "time", fmt_seconds),
            ("uncertainty_rel", "± spread", lambda v: f"{100 * v:.1f}%"),
            ("interpolation_rel", "± interp", _fmt_rel),
            ("lo_footprint_bytes", "measured from", fmt_bytes),
            ("hi_footprint_bytes", "to", fmt_bytes),
            ("extrapolated", "extrapolated", lambda v: "YES" if v else "no"),
            ("rows", "rows / square's", None),
            ("point_flags", "flags", lambda v: v or ""),
        ],
        as_json=False,
        title=(
            f"{kernel} x{iterations} iterations, {threads} thread(s), {precision}, "
            f"{d['context']}: method {d['method']}, environment {d['environment_id']}, "
            f"{lookup.selection.machine.scope.label}"
        ),
    )
    notes = []
    if d["refit"]:
        notes.append(f"fitted now and stored as model {d['model_id']}")
    if d["invalid_excluded"]:
        notes.append(f"{d['invalid_excluded']} invalid measurement(s) left out")
    if any(r["extrapolated"] for r in rows):
        lo, hi = d["measured_range_bytes"]
        notes.append(
            f"measured range {fmt_bytes(lo)} .. {fmt_bytes(hi)}: answers outside it extrapolate"
        )
    if any(r["aspect_extrapolated"] for r in rows):
        notes.append(
            "rows / square's: the block's row length against a square's of its footprint; "
            "beyond the measured rectangles the row-length correction is held at its last value"
        )
    if any(r["layer"] == "same_rows" for r in rows):
        notes.append(
            "same_rows: measured blocks with these rows bracket the footprint within 19 %; "
            "they answer instead of the footprint curve (why: docs/findings/lookup-layers.md)"
        )
    if any(r["layer"] == "aspect" for r in rows):
        notes.append(
            "aspect: the square curve times the row-length correction fitted from the "
            "measured rectangles; curve: the square curve alone"
        )
    if any(r["point_flags"] for r in rows):
        notes.append("flags: noisy = high CV; spike/dip = point sticks out of its neighbours")
    for note in notes:
        console.print(f"[dim]{note}[/]")


def _print_speedup(report: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print_json(report)
        return
    more = report["threads"][1:]
    rows = [
        {
            "level": r["level"],
            **{f"S{t}": r["speedup"].get(str(t)) for t in more},
            "f": r["parallel_fraction"],
        }
        for r in report["ranges"]
    ]
    emit(
        rows,
        [
            ("level", "footprint in", None),
            *((f"S{t}", f"speedup {t} thr", lambda v: f"{v:.2f}") for t in more),
            ("f", "Amdahl parallel fraction", lambda v: f"{100 * v:.1f}%"),
        ],
        as_json=False,
        title=f"{report['kernel']}: speedup over 1 thread (median over footprints per level)",
    )
