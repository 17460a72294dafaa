"""Does an exchange inside the model cost the same in a short run as in a long one?

The exchange calibration (``benchdb app calibrate``) times the model's
exchanges in short runs (:data:`SECONDS_PER_CASE`); the validated runs are
longer (:data:`LONG_SECONDS`).  In validations the exchanges of a step have
cost one of two levels, switching between runs seconds apart with the loops
unchanged (docs/findings/app-exchanges.md, "Two levels of exchange cost").
This alternates short and long runs of one grid, every
decomposition of ``--ranks``, in one MPI job (like the calibration and the
validation), ``--rounds`` times, and prints each run's exchanges and loops per
step (slowest rank) in run order: if the short runs are slow and the long ones
fast in the same minute, the run length matters; if both switch together, the
host does.

    python benchmarks/exchange_modes.py --db sqlite:////tmp/xm.sqlite --grid 70 --rounds 4
"""

from __future__ import annotations

import argparse
import math

from benchdb.collectors.app.collect import run_cases
from benchdb.collectors.app.exchanges import (
    SECONDS_OF_EXCHANGES,
    SECONDS_PER_CASE,
    SECONDS_PER_LOCAL_POINT,
)

from benchdb.app.decomposition import decompositions
from benchdb.app.model import AppCase
from benchdb.db.app_runs import app_run_summary
from benchdb.db.engine import open_database

LONG_SECONDS = 2.0  # about one validation run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", required=True)
    ap.add_argument("--grid", type=int, default=70, help="square global grid side")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=4)
    args = ap.parse_args()
    db = open_database(args.db)
    grid = (args.grid, args.grid)
    per_step = SECONDS_PER_LOCAL_POINT * args.grid**2 / args.ranks + SECONDS_OF_EXCHANGES
    lengths = {"short": SECONDS_PER_CASE, "long": LONG_SECONDS}
    cases = [
        (name, AppCase(grid, d, max(3, math.ceil(seconds / per_step))))
        for _ in range(args.rounds)
        for name, seconds in lengths.items()
        for d in decompositions(grid, args.ranks)
    ]
    ids = run_cases(db, [c for _, c in cases], kind="app", tags=("probe",))
    print("run  length  decomp    steps  exchanges us/step  loops us/step")
    for i, ((name, case), app_run_id) in enumerate(zip(cases, ids, strict=True)):
        run = app_run_summary(db, app_run_id)
        xch = 1e6 * sum(run["exchanges_s"].values()) / case.steps
        loops = 1e6 * sum(run["loops_s"].values()) / case.steps
        print(f"{i:3}  {name:6}  {case.decomp.key:6}  {case.steps:7}  {xch:17.2f}  {loops:13.2f}")


if __name__ == "__main__":
    main()
