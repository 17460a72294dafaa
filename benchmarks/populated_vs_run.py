"""Do the populated curve's points match the model's loops at the very same block?

The application model predicts a P-rank run's loops from the ``fullstep:ppnP``
curve (``benchdb app calibrate --ranks P``), interpolated between measured
blocks.  This takes the interpolation out: ``--rounds`` times, it measures the
populated curve at exactly the local blocks of every decomposition of P ranks
of ``--grid`` (``calibrate_populated``, the calibration's own method), then runs
each decomposition once (one MPI job, ``run_cases``), and prints, in
milliseconds per step summed over the loops, the populated point against the
run's slowest rank.  A ratio that stays away from 1 round after round is a
difference between the calibration's and the model's loops; one that swings
from round to round is the host.

    python benchmarks/populated_vs_run.py --db sqlite:////tmp/pvr.sqlite --grid 1606 --rounds 3
"""

from __future__ import annotations

import argparse

from benchdb.collectors.app.collect import run_cases
from benchdb.collectors.app.populated import calibrate_populated

from benchdb.app.context import LoopContext
from benchdb.app.decomposition import decompositions
from benchdb.app.model import AppCase
from benchdb.db.app_runs import app_run_summary
from benchdb.db.engine import open_database
from benchdb.db.measurements import measurements_frame
from benchdb.shapes import shape_key


def populated_ms(db, run_id: int, ranks: int) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """Per block, the populated point's milliseconds per step summed over the loops."""
    frame = measurements_frame(db, run_ids=[run_id], context=str(LoopContext(ranks)))
    loops = frame[frame["kernel"] != "shallow.step"]
    return (1e3 * loops.groupby("shape_key")["t_median"].sum()).to_dict()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", required=True)
    ap.add_argument("--grid", type=int, default=1606, help="square global grid side")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--steps", type=int, default=45)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    db = open_database(args.db)
    grid = (args.grid, args.grid)
    cases = [AppCase(grid, d, args.steps) for d in decompositions(grid, args.ranks)]
    blocks = ",".join(sorted({shape_key(c.local) for c in cases}))
    print("decomp  block       populated ms/step  run ms/step  run/populated")
    for _ in range(args.rounds):
        run_id, _ = calibrate_populated(db, args.ranks, sizes_spec=blocks, tags=("probe",))
        curve = populated_ms(db, run_id, args.ranks)
        for case, app_run_id in zip(
            cases, run_cases(db, cases, kind="app", tags=("probe",)), strict=True
        ):
            run = app_run_summary(db, app_run_id)
            ran = 1e3 * sum(run["loops_s"].values()) / case.steps
            point = curve[shape_key(case.local)]
            print(
                f"{case.decomp.key:6}  {shape_key(case.local):10}  {point:17.2f}  {ran:11.2f}"
                f"  {ran / point:13.3f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
