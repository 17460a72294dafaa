"""Does ``benchdb compare`` catch real slowdowns, and does it stay quiet on unchanged code?

Real kernels, real timings (real_runs.py ``RealRuns``: the
collectors' calibration and timing code), below the CLI; ``ab_detection.py``
measures the same question through the product's commands, in the sequential,
interleaved and duet orders.  A slowdown of factor k is
injected as a kernel variant doing k x the work (the first extent times k)
stored under the nominal shape, so the comparison cannot know.  Per trial,
one baseline run, ``--unchanged`` runs of the same code and one run per
injected factor are measured into a scratch database, then every other run
is compared with the baseline:

* detection rate at factor k: the share of kernel verdicts ``slower``;
* false-positive rate: the share of kernel verdicts ``slower`` (what fails
  CI) among the unchanged runs' comparisons, and how many of those
  comparisons would have exited 1.

``--history`` runs of the baseline's code are measured before it: its
replicates, whose run-to-run scatter ``compare`` charges to every kernel's
interval (benchdb/regress/replicates.py).  Each comparison is judged twice,
with that history and from the two runs alone.

Two orders of measurement (``--order``): ``interleaved`` takes the runs'
samples of a point round-robin, so load from other processes falls on all
runs alike (the best case); ``sequential`` measures one run after another,
each as ``benchdb collect`` does -- three passes over all of its points, the
second in reverse order, 7 samples per point in each -- as two collections
in CI are (the realistic case: the load changes between runs).  The time a kernel takes
need not scale exactly with its work (a longer array may cross a cache
level), so the measured median ratio is printed beside the injected factor.

    python benchmarks/regression_detection.py [--trials 4] [--order both]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
from real_runs import RealRuns

from benchdb.db.engine import open_database
from benchdb.regress import compare_runs

POINTS: dict[str, list[tuple[int, ...]]] = {
    "stream.triad": [(2000,), (20000,), (200000,), (1000000,)],
    "stencil2d5": [(32, 32), (128, 128), (512, 512)],
    "jacobi2d": [(32, 32), (128, 128), (512, 512)],
    "shallow": [(32, 32), (128, 128), (256, 256)],
}


def measure_trial(
    url: str, factors: list[float], unchanged: int, order: str, history: int
) -> dict[str, list]:
    """One trial's runs: ``{"1.0": [run ids], "2.0": [run id], ...}`` plus the baseline,
    after ``history`` earlier runs of the baseline's code (its replicates)."""
    db = open_database(url)
    runs = RealRuns(db)
    work = {runs.start(f"before{i}"): 1.0 for i in range(history)}
    base = runs.start("base")
    work[base] = 1.0
    labels: dict[str, list[int]] = defaultdict(list)
    for i in range(unchanged):
        run = runs.start(f"same{i}")
        work[run] = 1.0
        labels["1"].append(run)
    for k in factors:
        run = runs.start(f"x{k:g}", config={"injected": k})  # not a replicate
        work[run] = k
        labels[f"{k:g}"].append(run)
    if order == "interleaved":
        for bench, shapes in POINTS.items():
            for shape in shapes:
                runs.measure(bench, shape, work)
    else:
        points = [(bench, shape) for bench, shapes in POINTS.items() for shape in shapes]
        for run, w in work.items():
            runs.collect(run, points, w)
    for run in work:
        runs.finish(run)
    db.close()
    return {"base": [base], **labels}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=4)
    parser.add_argument("--factors", default="2,1.2,1.1", help="injected slowdowns")
    parser.add_argument("--unchanged", type=int, default=2, help="unchanged runs per trial")
    parser.add_argument("--order", choices=["interleaved", "sequential", "both"], default="both")
    parser.add_argument("--threshold", type=float, default=0.05)
    parser.add_argument(
        "--history", type=int, default=2, help="runs of the baseline's code measured before it"
    )
    args = parser.parse_args()
    factors = [float(f) for f in args.factors.split(",")]
    orders = ["interleaved", "sequential"] if args.order == "both" else [args.order]
    kernels_per_run = None
    print(
        f"{len(POINTS)} benchmarks, {sum(map(len, POINTS.values()))} shapes; "
        f"{args.trials} trials x ({args.unchanged} unchanged + {len(factors)} slowed runs); "
        f"threshold {args.threshold:.0%}; load average {os.getloadavg()[0]:.1f} at start"
    )
    table = []
    for order in orders:
        # per label: (verdict with the replicates' scatter, verdict from the two runs only, ratio)
        verdicts: dict[str, list[tuple[str, str, float]]] = defaultdict(list)
        failing: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        comparisons: dict[str, int] = defaultdict(int)
        t0 = time.monotonic()
        for trial in range(args.trials):
            url = f"sqlite:///{Path(tempfile.mkdtemp()) / 'detect.sqlite'}"
            labels = measure_trial(url, factors, args.unchanged, order, args.history)
            db = open_database(url)
            (base,) = labels.pop("base")
            for label, runs in labels.items():
                for run in runs:
                    charged, plain = (
                        compare_runs(db, str(base), str(run), threshold=args.threshold, **kw)
                        for kw in ({}, {"replicates": False})
                    )
                    kernels_per_run = len(charged.kernels)
                    verdicts[label] += list(
                        zip(
                            charged.kernels["verdict"],
                            plain.kernels["verdict"],
                            charged.kernels["median_ratio"],
                            strict=True,
                        )
                    )
                    failing[label][0] += bool(len(charged.regressions))
                    failing[label][1] += bool(len(plain.regressions))
                    comparisons[label] += 1
            db.close()
            print(f"  {order} trial {trial + 1}/{args.trials} done, {time.monotonic() - t0:.0f} s")
        for label in [f"{k:g}" for k in factors] + ["1"]:
            rows = verdicts[label]
            n = len(rows)
            slower = sum(v == "slower" for v, _, _ in rows)
            plain_slower = sum(v == "slower" for _, v, _ in rows)
            noisy = sum(v == "noisy" for v, _, _ in rows)
            ratios = np.array([r for _, _, r in rows])
            table.append(
                (
                    order,
                    "1 (unchanged)" if label == "1" else label,
                    f"{np.median(ratios):.3f} [{np.percentile(ratios, 5):.3f}, "
                    f"{np.percentile(ratios, 95):.3f}]",
                    f"{slower}/{n} = {slower / n:.0%}",
                    f"{noisy}",
                    f"{failing[label][0]}/{comparisons[label]}",
                    f"{plain_slower}/{n} = {plain_slower / n:.0%}",
                    f"{failing[label][1]}/{comparisons[label]}",
                )
            )
    print(
        f"\nkernel verdicts ({kernels_per_run} kernels per comparison); "
        f"load average {os.getloadavg()[0]:.1f} at end"
    )
    header = (
        "order",
        "injected",
        "kernel ratio median [5%, 95%]",
        "called slower",
        "noisy",
        "exiting 1",
        "two runs only: slower",
        "exiting 1",
    )
    widths = [max(len(str(r[i])) for r in [header, *table]) for i in range(len(header))]
    for row in [header, *table]:
        print("  ".join(str(v).ljust(w) for v, w in zip(row, widths, strict=True)))
    print(
        "\ncalled slower at injected > 1: detection rate; at 1 (unchanged): false-positive rate."
        "\n'two runs only': the same comparisons without the replicates' run-to-run scatter."
    )


if __name__ == "__main__":
    main()
