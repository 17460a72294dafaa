"""``benchdb plot``: performance curves, predicted vs measured, roofline (PNG or SVG)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..errors import UserError
from .common import DbOption, ForceOption, HostOption, MachineOption, console, open_db
from .groups import HelpGroup
from .predict_cmd import ContextOption, EnvOption, PrecisionOption, ThreadsOption

app = typer.Typer(
    help="Figures: `curve` (paper 003 Fig. 3/5), `validation` (Fig. 4), `roofline`.",
    no_args_is_help=True,
    cls=HelpGroup,
)

OutOption = Annotated[Path, typer.Option("--out", "-o", help="Output file, .png or .svg.")]


@app.command("curve")
def curve(
    kernel: Annotated[list[str], typer.Option("--kernel", "-k", help="Kernel(s); repeatable.")],
    out: OutOption,
    method: Annotated[
        list[str] | None,
        typer.Option("--method", "-m", help="Interpolants to draw (default all)."),
    ] = None,
    threads: ThreadsOption = 1,
    precision: PrecisionOption = "float64",
    machine: MachineOption = None,
    host: HostOption = None,
    environment: EnvOption = None,
    context: ContextOption = None,
    force: ForceOption = False,
    db: DbOption = None,
) -> None:
    """Performance vs memory footprint: measured points, interpolants, cache sizes.

    Example:  benchdb plot curve -k shallow.cu -k shallow.z --out curve.png
    """
    import numpy as np

    from .. import figures
    from ..predict.lookup import prepare_lookup
    from ..predict.methods import METHODS

    figures.check_output(out, force)
    database = open_db(db)
    curves, units, caches = [], set(), ()
    for k in kernel:
        fits = {}
        for m in method or METHODS.names():
            lk = prepare_lookup(
                database,
                k,
                method=m,
                threads=threads,
                precision=precision,
                machine=machine,
                host=host,
                environment_id=environment,
                context=context,
            )
            fp = lk.curve.footprint
            x = np.geomspace(fp[0], fp[-1], 400)
            fits[m] = (x, lk.rates(x))
        units.add(lk.basis.unit)
        caches = lk.selection.machine.caches
        curves.append({"kernel": k, "points": lk.curve.points_table(), "fits": fits})
    if len(units) > 1:
        raise UserError(f"kernels with different units ({', '.join(units)}) cannot share a plot")
    path = figures.save(figures.performance_curve(curves, caches, unit=units.pop()), out, force)
    console.print(f"wrote {path}")


@app.command("validation")
def validation(
    out: OutOption,
    kernel: Annotated[list[str] | None, typer.Option("--kernel", "-k")] = None,
    method: Annotated[str, typer.Option("--method", "-m", help="Method to show.")] = "pchip",
    fit_run: Annotated[list[int] | None, typer.Option("--fit-run")] = None,
    check_run: Annotated[list[int] | None, typer.Option("--check-run")] = None,
    threads: ThreadsOption = 1,
    precision: PrecisionOption = "float64",
    machine: MachineOption = None,
    host: HostOption = None,
    force: ForceOption = False,
    db: DbOption = None,
) -> None:
    """Predicted vs measured on the independent sweep (see `benchdb validate`).

    Example:  benchdb plot validation --method pchip --out fig4.svg
    """
    from .. import figures
    from ..predict.validate import validate

    figures.check_output(out, force)
    report = validate(
        open_db(db),
        machine=machine,
        host=host,
        kernels=kernel,
        methods=[method],
        threads=threads,
        precision=precision,
        fit_runs=fit_run,
        check_runs=check_run,
    )
    path = figures.save(figures.predicted_vs_measured(report["check_points"]), out, force)
    console.print(f"wrote {path}")


@app.command("roofline")
def roofline(
    out: OutOption,
    threads: ThreadsOption = 1,
    precision: PrecisionOption = "float64",
    machine: MachineOption = None,
    host: HostOption = None,
    environment: EnvOption = None,
    force: ForceOption = False,
    db: DbOption = None,
) -> None:
    """Cache-aware roofline: STREAM ceilings per level, measured peak, kernels' rates.

    Example:  benchdb plot roofline --out roofline.png
    """
    import numpy as np

    from .. import figures
    from ..predict.baselines import BASELINES, roofline
    from ..predict.machine_data import environment_data
    from ..predict.source import resolve_machine_caches

    figures.check_output(out, force)
    database = open_db(db)
    mc = resolve_machine_caches(database, machine, host)
    data = environment_data(
        database, mc, threads=threads, precision=precision, environment_id=environment
    )
    params = BASELINES.get("roofline").fit(data)
    names = [n for n, _ in mc.level_capacities()]
    kernels = []
    for name, kc in sorted(data.curves.items()):
        if kc.basis.unit != "flop/s":
            continue
        lvl = data.level_of(kc.curve.footprint)
        rates = {names[i]: float(np.median(kc.curve.rate[lvl == i])) for i in np.unique(lvl)}
        kernels.append({"kernel": name, "intensity": roofline.intensity(kc.basis), "rates": rates})
    path = figures.save(figures.roofline(params, kernels), out, force)
    console.print(f"wrote {path}")
