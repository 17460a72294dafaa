"""How often does ``benchdb compare`` call unchanged code a regression on this machine?

Collects the same small sweep ``--runs`` times in a row (real kernels, real
timings, the collectors' own sweep engine) into a scratch database, then
compares each run with the next: nothing changed between them, so every
``slower`` verdict is a false positive.  The earlier runs are the baseline's
replicates, whose scatter ``compare`` charges (benchdb/regress/replicates.py);
each comparison is also judged from its two runs alone.  Prints, per comparison, the slower
kernels (what fails CI) and the slower points (``--per-point``), then the
totals and the spread of the points' ratios (the machine's run-to-run noise).

    python benchmarks/false_positive_rate.py [--runs 11] [--db sqlite:///fp.sqlite]
"""

from __future__ import annotations

import argparse
import itertools
import tempfile
import time
from pathlib import Path

import numpy as np
from benchdb.collectors.plan import build_plan
from benchdb.collectors.sweep import detect_context, run_sweep

from benchdb.db.engine import open_database
from benchdb.regress import compare_runs

KERNELS = ["stream.triad", "stream.copy", "stencil2d5", "jacobi2d", "shallow"]
FOOTPRINTS = "64KiB,512KiB,8MiB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11, help="collections (comparisons = runs-1)")
    parser.add_argument("--db", help="database URL (default: a scratch SQLite file)")
    parser.add_argument("--footprints", default=FOOTPRINTS)
    parser.add_argument("--threshold", type=float, default=0.05)
    args = parser.parse_args()
    url = args.db or f"sqlite:///{Path(tempfile.mkdtemp()) / 'fp.sqlite'}"
    db = open_database(url)
    ctx = detect_context()
    plan = build_plan(ctx.machine, kernels=KERNELS, footprints_spec=args.footprints)
    print(f"database {url}; {len(plan.points)} points per run, {args.runs} runs")
    runs = []
    for i in range(args.runs):
        t0 = time.monotonic()
        result = run_sweep(db, plan, tags=[f"fp{i}"], context=ctx)
        runs.append(result.run_id)
        print(f"run {result.run_id} collected in {time.monotonic() - t0:.1f} s")
    kernel_fp = point_fp = points = kernels = failing = faster = 0
    plain_fp = plain_failing = plain_faster = 0
    ratios = []
    for a, b in itertools.pairwise(runs):
        c = compare_runs(db, str(a), str(b), threshold=args.threshold)
        plain = compare_runs(db, str(a), str(b), threshold=args.threshold, replicates=False)
        plain_slower = int((plain.kernels["verdict"] == "slower").sum())
        plain_fp += plain_slower
        plain_failing += bool(plain_slower)
        plain_faster += int((plain.kernels["verdict"] == "faster").sum())
        slower_k = sorted(set(c.kernels.loc[c.kernels["verdict"] == "slower", "kernel"]))
        slower_p = c.results[c.results["verdict"] == "slower"]
        faster += int((c.kernels["verdict"] == "faster").sum())
        kernel_fp += len(slower_k)
        failing += bool(slower_k)
        point_fp += len(slower_p)
        kernels += len(c.kernels)
        points += len(c.results)
        ratios.extend(c.results["ratio"])
        print(
            f"compare {a} {b}: kernels {c.kernel_counts}; slower kernels {slower_k or '-'}; "
            f"slower points {len(slower_p)} of {len(c.results)}; "
            f"replicates charged {list(c.replicates) or '-'}; two runs only: "
            f"{plain_slower} slower"
        )
    logs = np.log(ratios)
    print(
        f"TOTAL over {len(runs) - 1} comparisons of unchanged code: "
        f"{kernel_fp} false kernel regressions (of {kernels} kernel verdicts), "
        f"{failing} comparisons exiting 1, {faster} kernels called faster; "
        f"{point_fp} false point regressions (of {points} points, --per-point)"
    )
    print(
        f"the same comparisons from the two runs alone (no replicates' scatter): {plain_fp} "
        f"false kernel regressions, {plain_failing} comparisons exiting 1, "
        f"{plain_faster} kernels called faster"
    )
    print(
        f"point ratios: median {np.exp(np.median(logs)):.3f}, 5-95% "
        f"{np.exp(np.percentile(logs, 5)):.3f}..{np.exp(np.percentile(logs, 95)):.3f}, "
        f"min {min(ratios):.3f}, max {max(ratios):.3f}"
    )


if __name__ == "__main__":
    main()
