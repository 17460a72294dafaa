"""Does running several model runs in one MPI job (``run_cases``) change a run?

``benchmarks/app_validation.py`` and the exchange calibration run many cases in
one job to share the compilation (docs/findings/app-exchanges.md).  This
alternates, ``--rounds`` times, three single-run jobs (``run_app``, as ``benchdb
app run``) and one job of three runs (``run_cases``) of the same case, and
prints the measured totals side by side.

    python benchmarks/batched_runs.py --db sqlite:///batched.sqlite --grid 62 --steps 24000
"""

from __future__ import annotations

import argparse

from benchdb.collectors.app.collect import AppRunRequest, run_app, run_cases

from benchdb.app.decomposition import parse_decomposition
from benchdb.db.app_runs import app_run_summary
from benchdb.db.engine import open_database


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", required=True)
    ap.add_argument("--grid", type=int, default=62, help="square global grid side")
    ap.add_argument("--decomp", default="1x1")
    ap.add_argument("--steps", type=int, default=24000)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    db = open_database(args.db)
    case = AppRunRequest((args.grid, args.grid), parse_decomposition(args.decomp), args.steps)
    for _ in range(args.rounds):
        single = [app_run_summary(db, run_app(db, case))["total_s"] for _ in range(3)]
        ids = run_cases(db, [case] * 3, kind="app", tags=())
        batched = [app_run_summary(db, i)["total_s"] for i in ids]
        print(
            "single " + " ".join(f"{t:.3f}" for t in single),
            "| batched " + " ".join(f"{t:.3f}" for t in batched),
            flush=True,
        )


if __name__ == "__main__":
    main()
