"""numba STREAM triad beside the same triad in C (``gcc -O3 -march=native``).

Both time the same 64-byte-aligned float64 arrays, with the repetition loop in
compiled code, at an L2-, an L3- and a DRAM-resident working set derived from
the caches this machine reports in sysfs.  Samples alternate numba and C; the
best of each is reported (STREAM's convention) with the median beside it.
Goal: numba >= 0.95 x C at every level.

    python benchmarks/triad_bench.py [--samples 9] [--seconds 0.1]
"""

from __future__ import annotations

import argparse
import ctypes
import math
import statistics
import subprocess
import tempfile
from importlib.resources import as_file, files
from pathlib import Path

from benchdb.kernels import get_benchmark
from benchdb.kernels.builtin.stream import STREAM_KERNELS

from benchdb.machine import read_caches_sysfs

TRIAD = next(k for k in STREAM_KERNELS if k.name == "stream.triad")
BYTES_PER_POINT = TRIAD.bytes_per_point("float64")  # STREAM counting: 24 B


def build_c_triad(workdir: Path) -> ctypes.CDLL:
    """Compile the shipped ``kernels/c/triad.c`` into ``workdir`` and load it."""
    library = workdir / "libtriad.so"
    with as_file(files("benchdb.kernels") / "c" / "triad.c") as source:
        subprocess.run(
            ["gcc", "-O3", "-march=native", "-shared", "-fPIC", "-o", str(library), str(source)],
            check=True,
        )
    lib = ctypes.CDLL(str(library))
    lib.triad.restype = ctypes.c_double
    lib.triad.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_double, ctypes.c_long, ctypes.c_long]
    return lib


def working_sets() -> dict[str, int]:
    """Triad working set (3 arrays) per level: half of L2, between L2 and L3, 4x L3."""
    caches = {f"L{c.level}": c.size_bytes for c in read_caches_sysfs() if c.type != "Instruction"}
    last = caches[max(caches, key=lambda name: int(name[1:]))]
    return {"L2": caches["L2"] // 2, "L3": int(math.sqrt(caches["L2"] * last)), "DRAM": 4 * last}


def compare(lib: ctypes.CDLL, n: int, samples: int, seconds: float) -> tuple[list, list]:
    prepared = get_benchmark("stream.triad").prepare((n,), "float64", 1)
    a, b, c, s = prepared.state
    pointers = (a.ctypes.data, b.ctypes.data, c.ctypes.data)
    lib.triad(*pointers, float(s), n, 1)  # warm-up, first touch done by prepare
    probe = prepared.run(3)["stream.triad"] / 3
    reps = max(1, int(seconds / probe))
    numba_bw, c_bw = [], []
    for _ in range(samples):
        numba_bw.append(BYTES_PER_POINT * n * reps / prepared.run(reps)["stream.triad"])
        c_bw.append(BYTES_PER_POINT * n * reps / lib.triad(*pointers, float(s), n, reps))
    return numba_bw, c_bw


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=9)
    parser.add_argument("--seconds", type=float, default=0.1, help="per sample")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        lib = build_c_triad(Path(tmp))
        print(
            f"{'level':5s} {'n':>9s} {'MiB':>8s} {'numba GB/s':>17s} {'C GB/s':>17s}"
            f" {'numba/C':>8s}"
        )
        print(f"{'':5s} {'':>9s} {'':>8s} {'best':>8s} {'median':>8s} {'best':>8s} {'median':>8s}")
        for level, nbytes in working_sets().items():
            n = nbytes // (3 * 8)
            nb, cb = compare(lib, n, args.samples, args.seconds)
            ratio = max(nb) / max(cb)
            print(
                f"{level:5s} {n:9d} {3 * 8 * n / 2**20:8.2f} {max(nb) / 1e9:8.2f}"
                f" {statistics.median(nb) / 1e9:8.2f} {max(cb) / 1e9:8.2f}"
                f" {statistics.median(cb) / 1e9:8.2f} {ratio:8.3f}"
                f"  {'ok' if ratio >= 0.95 else 'below 0.95'}"
            )


if __name__ == "__main__":
    main()
