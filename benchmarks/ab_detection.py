"""Does ``benchdb ab`` catch injected slowdowns, and stay quiet on unchanged code?
And how does that compare with two collections one after the other?

Through the product path, the real CLI.  In the ``interleaved`` and ``duet`` orders
each comparison is one ``benchdb ab`` command (two worker processes), judged by its
own rule (3 % threshold).  In the ``sequential`` order, how CI compares without
``ab``, it is two ``benchdb collect`` runs, the base's then the change's, at the
footprints ``ab`` measures by default (``--collect-args`` adds options), judged by
``benchdb compare --threshold 3``.  The kernels
are the fifteen of ``benchmarks/ab/inject.py``; a slowdown of k is the same plugin
with ``WORK = k`` on the change side (k x the work under the nominal shape; the
kernel's version differs, as a changed plugin's would).  Every side loads its own
copy of the plugin from a folder of its own, as two checkouts would, the unchanged
comparisons too (two copies of ``WORK = 1``).  Per order (``--orders``)
and co-runner (``--corunner``: none, and/or a process streaming through 256 MiB
arrays the whole time), ``--unchanged`` same-vs-same comparisons and ``--repeats``
per factor; ``--numba-opt0`` adds ``--change-env NUMBA_OPT=0`` (slow: the change side
is tens of times slower).

Printed per order and co-runner: per injected factor the median of the kernels'
measured ratios, the kernels called slower (detection; at 1, false alarms), noisy
and disturbed, and how many comparisons exited 1.

    python benchmarks/ab_detection.py [--orders interleaved,duet,sequential]
        [--corunner none,stream]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np
from benchdb.collectors.ab.coordinator import default_footprints
from co_runners import co_runners

from benchdb.db.engine import open_database
from benchdb.db.runs import stored_runs
from benchdb.machine import detect_machine
from benchdb.regress.paired import judge_pair
from benchdb.verdicts import Verdict

sys.path.insert(0, str(Path(__file__).parent / "ab"))
from inject import write_variant

MAX_COMPARISON_S = 600
"""A comparison's time, at most: the co-runner stops itself after all of them would."""


def run_ab(
    db: str, order: str, base: Path, change: list[str], common: list[str]
) -> tuple[int, list[dict]]:
    """One ``benchdb ab``: its exit status and kernel verdicts."""
    cmd = [sys.executable, "-m", "benchdb", "ab", "--order", order, "--json", "--db", db]
    proc = subprocess.run(
        [*cmd, "--base-plugin", str(base), *change, *common], capture_output=True, text=True
    )
    if proc.returncode not in (0, 1):
        raise SystemExit(f"benchdb ab failed ({proc.returncode}): {proc.stderr.strip()}")
    return proc.returncode, json.loads(proc.stdout)["judgement"]["kernels"]


def run_sequential(
    db: str, base: Path, change: list[str], args: list[str]
) -> tuple[int, list[dict]]:
    """Two collections, the base's then the change's, and ``benchdb compare``: its exit
    status and kernel verdicts."""
    options = dict(zip(change[::2], change[1::2], strict=True))
    env = dict(os.environ)
    if "--change-env" in options:
        name, _, value = options["--change-env"].partition("=")
        env[name] = value
    benchdb = [sys.executable, "-m", "benchdb"]
    runs = []
    for plugin, side_env in ((str(base), None), (options["--change-plugin"], env)):
        proc = subprocess.run(
            [*benchdb, "collect", "--plugin", plugin, "--json", "--db", db, *args],
            capture_output=True, text=True, env=side_env,
        )  # fmt: skip
        if proc.returncode != 0:
            raise SystemExit(f"benchdb collect failed ({proc.returncode}): {proc.stderr.strip()}")
        runs.append(str(json.loads(proc.stdout)["run"]["run_id"]))
    proc = subprocess.run(
        [*benchdb, "compare", *runs, "--threshold", "3", "--json", "--db", db],
        capture_output=True, text=True,
    )  # fmt: skip
    if proc.returncode not in (0, 1):
        raise SystemExit(f"benchdb compare failed ({proc.returncode}): {proc.stderr.strip()}")
    kernels = json.loads(proc.stdout)["kernels"]
    return proc.returncode, [{"verdict": k["verdict"], "ratio": k["median_ratio"]} for k in kernels]


def stored_ab(db: str) -> tuple[int, list[dict]]:
    """A stored comparison of ``benchdb ab`` judged again: as :func:`run_ab` answers."""
    database = open_database(db)
    try:
        base, change = sorted(r["id"] for r in stored_runs(database))
        kernels = judge_pair(database, base, change).kernels
    finally:
        database.close()
    verdicts = [
        {"verdict": str(k.verdict), "ratio": None if np.isnan(k.ratio) else k.ratio}
        for k in kernels
    ]
    return int(any(k.verdict == Verdict.SLOWER for k in kernels)), verdicts


def _footprints(ab_args: list[str]) -> str:
    """The footprints ``benchdb ab`` measures with these options."""
    if "--footprints" in ab_args:
        return ab_args[ab_args.index("--footprints") + 1]
    return default_footprints(detect_machine())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orders", default="interleaved,duet")
    parser.add_argument("--corunner", default="none", help="none, stream, or none,stream")
    parser.add_argument("--factors", default="1.05,1.1,1.2,2")
    parser.add_argument("--unchanged", type=int, default=2, help="same-vs-same comparisons")
    parser.add_argument("--repeats", type=int, default=1, help="comparisons per factor")
    parser.add_argument("--numba-opt0", action="store_true")
    parser.add_argument(
        "--from-dbs",
        type=Path,
        help="judge the comparisons a run of this script left in this folder (with the "
        "same options) with the current code, instead of measuring",
    )
    parser.add_argument(
        "--collect-args",
        default="--passes 3",
        help="options of the sequential order's benchdb collect, besides the footprints",
    )
    parser.add_argument(
        "--ab-args",
        default="--footprints 24KiB,1MiB --sample-time 0.002 --pairs 5 --trials 3",
        help="the measuring options of every benchdb ab",
    )
    args = parser.parse_args()
    common = args.ab_args.split()
    collect_args = ["--footprints", _footprints(common), *args.collect_args.split()]
    work = args.from_dbs or Path(tempfile.mkdtemp(prefix="ab-detection-"))
    base, same = write_variant(work / "base", 1.0), write_variant(work / "same", 1.0)
    variants = {k: write_variant(work / f"x{k}", float(k)) for k in args.factors.split(",")}
    print(
        f"benchdb ab {' '.join(common)}; load average {os.getloadavg()[0]:.1f} at start",
        flush=True,
    )
    table = []
    orders = args.orders.split(",")
    comparisons = len(orders) * (
        args.unchanged + args.repeats * len(variants) + int(args.numba_opt0)
    )
    for corunner in args.corunner.split(","):
        condition = {"none": "quiet", "stream": "memory"}[corunner]
        with co_runners(
            "quiet" if args.from_dbs else condition, max_seconds=MAX_COMPARISON_S * comparisons
        ):
            for order in orders:
                cases = [("1 (unchanged)", ["--change-plugin", str(same)])] * args.unchanged
                cases += [
                    (k, ["--change-plugin", str(p)])
                    for k, p in variants.items()
                    for _ in range(args.repeats)
                ]
                if args.numba_opt0:
                    cases.append(
                        (
                            "NUMBA_OPT=0",
                            ["--change-plugin", str(same), "--change-env", "NUMBA_OPT=0"],
                        )
                    )
                results: dict[str, list[tuple[int, list[dict]]]] = {}
                t0 = time.monotonic()
                for i, (label, change) in enumerate(cases):
                    db = f"sqlite:///{work / f'{corunner}-{order}-{i}.sqlite'}"
                    if args.from_dbs:
                        result = stored_ab(db)
                    elif order == "sequential":
                        result = run_sequential(db, base, change, collect_args)
                    else:
                        result = run_ab(db, order, base, change, common)
                    results.setdefault(label, []).append(result)
                for label, runs in results.items():
                    kernels = [k for _, ks in runs for k in ks]
                    counts = Counter(k["verdict"] for k in kernels)
                    ratios = [k["ratio"] for k in kernels if k["ratio"] is not None]
                    table.append(
                        (
                            order,
                            corunner,
                            label,
                            f"{np.median(ratios):.3f} [{np.min(ratios):.3f}, {np.max(ratios):.3f}]",
                            f"{counts['slower']}/{len(kernels)}",
                            str(counts["noisy"]),
                            str(counts["faster"]),
                            str(counts["disturbed"]),
                            f"{sum(rc == 1 for rc, _ in runs)}/{len(runs)}",
                        )
                    )
                print(
                    f"  {order}, co-runner {corunner}: {len(cases)} comparisons in "
                    f"{time.monotonic() - t0:.0f} s",
                    flush=True,
                )
    header = (
        "order", "co-runner", "injected", "kernel ratio median [min, max]", "called slower",
        "noisy", "faster", "disturbed", "exit 1",
    )  # fmt: skip
    print(f"\nload average {os.getloadavg()[0]:.1f} at end")
    print("| " + " | ".join(header) + " |\n|" + "---|" * len(header))
    for row in table:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
