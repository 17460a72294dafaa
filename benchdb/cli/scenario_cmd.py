"""``benchdb scenario``: rank every decomposition of the given rank counts by predicted time.

Paper 003 section I (choose a deployment without running every option) and
paper 001 section 5 (what-if studies on a validated model): each row is one
px x py decomposition with its predicted time, the dominant term, the
compute/exchange split and, with power parameters, the energy to solution
(paper 000 section 5).
"""

from __future__ import annotations

import math
from typing import Annotated, Any

import typer

from ..app.model import ExchangeSource, check_steps
from ..app.scenario import RankedPrediction, explore, scenario_cases
from ..errors import UserError
from ..units import fmt_seconds
from .app_options import CaseOptions, ProgramOption, Target, WhatIf
from .common import DbOption, JsonOption, open_db, print_json, print_table
from .option_groups import option_group


def parse_ranks(text: str) -> list[int]:
    """'1,2,4' -> [1, 2, 4]; UserError on anything else."""
    try:
        ranks = [int(p) for p in text.split(",") if p.strip()]
    except ValueError:
        ranks = []
    if not ranks or any(r < 1 for r in ranks):
        raise UserError(f"--ranks {text!r} must be positive integers, e.g. --ranks 1,2,4")
    return sorted(set(ranks))


def _table_row(ranked: RankedPrediction) -> dict[str, Any]:
    """The JSON row with what the table adds: energy in J, both ± relative to the total
    and where the exchanges come from."""
    pred, row = ranked.prediction, ranked.to_dict()
    total = pred.total_s if pred.total_s > 0 else math.inf
    row["energy_j"] = ranked.energy["total_j"] if ranked.energy else None
    row["spread"] = pred.uncertainty_s / total
    row["interpolation"] = pred.compute_interpolation_s / total
    source = pred.exchange_source
    row["exchanges_by"] = "-" if source is ExchangeSource.NONE else source.value
    return row


@option_group("whatif", WhatIf)
@option_group("run", CaseOptions)
def scenario(
    run: CaseOptions,
    ranks: Annotated[str, typer.Option("--ranks", help="Rank counts to try, e.g. 1,2,4.")],
    whatif: WhatIf,
    program: ProgramOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Rank decompositions (and rank counts) of a grid by predicted run time; with
    --program, of a user's program (its spec's [parallel] section), its loops from its
    own sweep (of as many copies at once as a node runs ranks: `benchdb app calibrate
    --program`) and its exchanges from the halo model.

    "± spread" (the loops' lookup spread plus the measured exchanges' spread) and
    "± interp" (the loops' interpolation error), relative to the total, are the two ±
    of `benchdb app predict` (see its --help): decompositions closer than these are not
    told apart by the data.

    Examples:

      benchdb scenario --grid 1024x1024 --ranks 1,2 --steps 200

      benchdb scenario --grid 4096x4096 --ranks 16,64 --machine-file bluegene_l \\
          --scale-bandwidth 2 --core-busy-w 10 --dram-w 5

      benchdb scenario --grid 2048x2048 --ranks 4,8 --machine node07   # node07's class

      benchdb scenario --program examples/shallow_mpi/benchdb.toml --grid 4096x4096 \\
          --ranks 4,16,64,256,1024 --machine-file summit --single-process-curves
    """
    shape = run.shape
    check_steps(run.steps, run.diag_every)
    target = Target.of(program)
    cases = target.runnable(
        scenario_cases(shape, parse_ranks(ranks), run.steps, run.precision, run.diag_every)
    )
    power = whatif.power()
    database = open_db(db)
    comm = whatif.comm(database, needed=any(c.decomp.ranks > 1 for c in cases))
    ranked = explore(
        database,
        cases,
        comm,
        whatif.model_options(),
        power=power,
        cores=whatif.cores(database),
        app=target.app,
    )
    if as_json:
        print_json([r.to_dict() for r in ranked])
        return
    print_table(
        [_table_row(r) for r in ranked],
        [
            ("rank", "#", None),
            ("decomposition", "decomp", None),
            ("ranks", "ranks", None),
            ("local_shape", "local", lambda v: f"{v[0]}x{v[1]}"),
            ("total_s", "predicted", fmt_seconds),
            ("spread", "± spread", lambda v: f"{100 * v:.0f}%"),
            ("interpolation", "± interp", lambda v: f"{100 * v:.0f}%"),
            ("vs_best", "vs best", lambda v: f"{v:.2f}x"),
            ("compute_s", "compute", fmt_seconds),
            ("exchange_s", "exchanges", fmt_seconds),
            ("exchanges_by", "exchanges by", None),
            ("dominant", "dominant", None),
            ("energy_j", "energy", lambda v: f"{v:.3g} J"),
        ],
        title=f"{target.app.name} {run.grid}, {run.steps} steps: decompositions ranked by "
        "predicted time",
    )
