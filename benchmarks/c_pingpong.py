"""benchdb's ping-pong against a plain C ping-pong built with the same MPICH.

Builds ``c_pingpong.c`` (OSU osu_latency/osu_bw style) with the ``mpicc`` that
sits beside the ``mpiexec`` benchdb uses (the mpich wheel's, in the virtual
environment), runs it and ``python -m benchdb.collectors.mpi --benchmarks
pingpong`` on 2 ranks pinned one per core, alternating ROUNDS times to spread
background load over both.  Per size it prints the one-way time of each --
the least-disturbed round's median (``min``) and the median over rounds
(``med``) -- and the latency (smallest message) and ping-pong bandwidth
(largest message) of both from the ``min`` columns.  The same statistic is
applied to both programs, since other users' CPU load moves single rounds
(docs/findings/comm-benchmarks.md).  It also fits the
piecewise postal model to benchdb's times and prints its median error.

usage: .venv/bin/python benchmarks/c_pingpong.py [--rounds 3] [--max-bytes 4194304]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchdb.collectors.mpi import launcher
from benchdb.collectors.mpi.job_output import RESULT
from benchdb.collectors.mpi.message_sizes import message_sizes

from benchdb.comm import fit_piecewise

HERE = Path(__file__).resolve().parent


def build(mpiexec: str, out: Path) -> Path:
    mpicc = Path(mpiexec).with_name("mpicc")
    exe = out / "c_pingpong"
    subprocess.run([str(mpicc), "-O2", "-o", str(exe), str(HERE / "c_pingpong.c")], check=True)
    return exe


def run_c(mpiexec: str, exe: Path, sizes: list[int], samples: int, min_time: float) -> dict:
    cmd = [mpiexec, "-n", "2", "-bind-to", "core", str(exe), str(max(sizes)), str(samples),
           str(min_time), *map(str, sizes)]  # fmt: skip
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    rows = [line.split() for line in out.splitlines() if line and not line.startswith("#")]
    return {int(r[0]): float(r[1]) for r in rows}


def run_py(mpiexec: str, sizes: list[int], samples: int, min_time: float) -> dict:
    args = ["--benchmarks", "pingpong", "--print", "--samples", str(samples),
            "--min-sample-time", str(min_time), "--sizes", ",".join(map(str, sizes))]  # fmt: skip
    out = subprocess.run(launcher.command(mpiexec, 2, args), capture_output=True, text=True,
                         check=True).stdout  # fmt: skip
    line = next(ln for ln in out.splitlines() if ln.startswith(RESULT))
    data = json.loads(line.split(" ", 1)[1])["data"]
    return {p["message_bytes"]: p["t_median"] for p in data}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--max-bytes", type=int, default=4 << 20)
    ap.add_argument("--samples", type=int, default=7)
    ap.add_argument("--min-sample-time", type=float, default=0.002)
    a = ap.parse_args()
    mpiexec = launcher.find_mpiexec()
    sizes = message_sizes(a.max_bytes)
    c_runs, py_runs = [], []
    with tempfile.TemporaryDirectory() as tmp:
        exe = build(mpiexec, Path(tmp))
        for i in range(a.rounds):
            print(f"round {i + 1}/{a.rounds}", file=sys.stderr)
            c_runs.append(run_c(mpiexec, exe, sizes, a.samples, a.min_sample_time))
            py_runs.append(run_py(mpiexec, sizes, a.samples, a.min_sample_time))
    c = {n: min(r[n] for r in c_runs) for n in sizes}
    py = {n: min(r[n] for r in py_runs) for n in sizes}
    c_med = {n: statistics.median(r[n] for r in c_runs) for n in sizes}
    py_med = {n: statistics.median(r[n] for r in py_runs) for n in sizes}
    print(f"{'bytes':>9} {'C min':>10} {'benchdb min':>12} {'ratio':>6}   "
          f"{'C med':>10} {'benchdb med':>12} {'ratio':>6}")  # fmt: skip
    for n in sizes:
        print(
            f"{n:>9} {c[n] * 1e6:>8.3f}us {py[n] * 1e6:>10.3f}us {py[n] / c[n]:>6.3f}   "
            f"{c_med[n] * 1e6:>8.3f}us {py_med[n] * 1e6:>10.3f}us {py_med[n] / c_med[n]:>6.3f}"
        )
    small, big = sizes[0], sizes[-1]
    print(
        f"latency ({small} B one-way): C {c[small] * 1e6:.3f} us, benchdb {py[small] * 1e6:.3f} us"
        f" ({py[small] / c[small] - 1:+.1%})"
    )
    print(
        f"bandwidth ({big} B ping-pong): C {big / c[big] / 1e9:.3f} GB/s, benchdb "
        f"{big / py[big] / 1e9:.3f} GB/s ({c[big] / py[big] - 1:+.1%})"
    )
    ratios = [py[n] / c[n] for n in sizes]
    print(
        f"benchdb/C over all sizes: median {statistics.median(ratios):.3f}, "
        f"min {min(ratios):.3f}, max {max(ratios):.3f}"
    )
    fit = fit_piecewise(sizes, [py[n] for n in sizes])
    acc = fit.accuracy()
    print(
        f"piecewise postal fit of benchdb's times: {len(fit.model.regimes)} regimes, median "
        f"|error| {acc['median_rel_error']:.1%}, max {acc['max_rel_error']:.1%}"
    )
    for r in fit.model.regimes:
        print(
            f"  {r.name:>12}: {r.min_bytes}..{r.max_bytes or 'inf'} B  alpha "
            f"{r.alpha * 1e6:.3f} us  1/beta "
            f"{1 / r.beta / 1e9 if r.beta else float('inf'):.3f} GB/s"
        )


if __name__ == "__main__":
    main()
