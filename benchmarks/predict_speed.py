"""How fast does the predictor answer?  (Targets: >= 1e5 predictions/s, < 1 s cold start.)

    .venv/bin/python benchmarks/predict_speed.py --db sqlite:////tmp/pred.sqlite --kernel shallow.cu

1. Vectorised throughput: ``benchdb.predict.predict`` on N random shapes (the
   fit is stored on the first call and read back after), best of R repeats,
   and the bare numpy evaluation (``Lookup.evaluate``) on the same shapes.
2. Cold start: wall time of fresh processes, median of R: ``python -c pass``
   (interpreter floor), the predict command alone (typer + the predict
   module, no other commands imported), and the real ``benchdb predict``
   console script (which imports every registered command).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

VENV_BIN = Path(sys.executable).parent


def best_of(repeats: int, fn) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def wall(cmd: list[str], repeats: int) -> tuple[float, list[float]]:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        times.append(time.perf_counter() - t0)
        if proc.returncode != 0:
            raise SystemExit(f"{cmd} failed: {proc.stderr}")
    return statistics.median(times), times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--db", required=True)
    ap.add_argument("--kernel", default="shallow.cu")
    ap.add_argument("--method", default="pchip")
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()

    from benchdb.db.engine import open_database
    from benchdb.predict import predict
    from benchdb.predict.predictions import predict_columns

    db = open_database(args.db)
    rng = np.random.default_rng(0)
    shapes = rng.integers(8, 3000, size=(args.n, 2))
    predict(db, args.kernel, shapes[:10], method=args.method)  # fit and store once
    t_api = best_of(args.repeats, lambda: predict(db, args.kernel, shapes, method=args.method))
    lookup, _ = predict_columns(db, args.kernel, shapes[:1], method=args.method)
    t_eval = best_of(args.repeats, lambda: lookup.evaluate(shapes, 100))
    print(
        f"predict() API, {args.n} shapes incl. DB read of the stored fit: "
        f"{t_api * 1e3:.1f} ms -> {args.n / t_api:.3g} predictions/s"
    )
    print(
        f"Lookup.evaluate (numpy only): {t_eval * 1e3:.1f} ms -> "
        f"{args.n / t_eval:.3g} predictions/s"
    )

    common = [
        "--db",
        args.db,
        "--kernel",
        args.kernel,
        "--shape",
        "500x500",
        "--method",
        args.method,
    ]
    alone = (
        "import sys, typer; from benchdb.cli.predict_cmd import predict; "
        f"sys.argv = ['predict', *{common!r}]; typer.run(predict)"
    )
    for label, cmd in (
        ("python -c pass", [sys.executable, "-c", "pass"]),
        ("predict command alone", [sys.executable, "-c", alone]),
        ("benchdb predict (console script)", [str(VENV_BIN / "benchdb"), "predict", *common]),
    ):
        med, times = wall(cmd, args.repeats)
        print(
            f"cold start, {label}: median {med:.2f} s "
            f"(runs: {', '.join(f'{t:.2f}' for t in times)})"
        )


if __name__ == "__main__":
    main()
