"""What ``benchdb export`` and ``benchdb import`` cost at a database's size (issue 57):
wall time, time per run and peak resident memory, each command in a fresh process.

    # a database of many runs (benchmarks/scale.py generate, from one quick collection)
    .venv/bin/python benchmarks/scale.py generate --template sqlite:////tmp/t/seed.sqlite \\
        --db sqlite:////tmp/t/h1000.sqlite --runs 1000
    # export it whole, import the file into an empty SQLite database, export that again
    # and compare the two files row by row
    .venv/bin/python benchmarks/transfer_memory.py --db sqlite:////tmp/t/h1000.sqlite \\
        --formats json,parquet --round-trip

Peak memory is the child's ``ru_maxrss`` from ``wait4`` (the process alone, not this
script); wall time includes the interpreter's start.  A benchmark, not a test: on a
shared machine, read the figures beside the load average it prints.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from itertools import zip_longest
from pathlib import Path

BENCHDB = str(Path(sys.executable).parent / "benchdb")


@dataclass
class Step:
    """One command's cost."""

    step: str
    runs: int
    measurements: int
    wall_s: float
    ms_per_run: float
    peak_rss_mb: float
    file_mb: float


def run_measured(argv: list[str]) -> tuple[float, float, dict]:
    """(wall seconds, peak RSS in MB, its --json output) of ``benchdb ARGV --json``."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen([BENCHDB, *argv, "--json"], stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            sys.exit(f"benchdb {' '.join(argv)} failed: {err.read().decode(errors='replace')}")
        return wall, usage.ru_maxrss / 1024, json.loads(out.read())


def timed(name: str, argv: list[str], file: Path, counts: dict | None = None) -> tuple[Step, dict]:
    """The cost of ``benchdb ARGV`` and its --json output; per run of ``counts`` (an
    export's output; default: this command's own)."""
    wall, rss, result = run_measured(argv)
    runs, points = (counts or result)["runs"], (counts or result)["measurements"]
    size = file.stat().st_size / 1e6
    return Step(name, runs, points, wall, 1e3 * wall / max(runs, 1), rss, size), result


def same_rows(first: Path, second: Path, fmt: str) -> bool:
    """Whether two export files hold the same records in the same order, read as
    ``benchdb import`` reads them (streamed: any size)."""
    from benchdb.db.transfer_read import file_records

    pairs = zip_longest(file_records(first, fmt), file_records(second, fmt))
    return all(a == b for a, b in pairs)


def measure(db: str, fmt: str, work: Path, round_trip: bool) -> list[Step]:
    out, again = work / f"export.{fmt}", work / f"again.{fmt}"
    target = work / f"imported-{fmt}.sqlite"
    for path in (
        out,
        again,
        *(target.with_name(target.name + end) for end in ("", "-wal", "-shm")),
    ):
        path.unlink(missing_ok=True)
    exported, counts = timed(f"export {fmt}", ["export", "--out", str(out), "--db", db], out)
    imported, _ = timed(f"import {fmt}", ["import", str(out), "--db", f"sqlite:///{target}"],
                        out, counts)  # fmt: skip
    steps = [exported, imported]
    if round_trip:
        argv = ["export", "--out", str(again), "--db", f"sqlite:///{target}"]
        steps.append(timed(f"export {fmt} again", argv, again)[0])
        if not same_rows(out, again, fmt):
            sys.exit(f"round trip: {out} and {again} differ")
        print(f"round trip {fmt}: the two files hold the same rows", file=sys.stderr)
    return steps


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True, help="database URL to export")
    parser.add_argument("--formats", default="json", help="json, parquet, csv (a,b)")
    parser.add_argument("--work", type=Path, help="folder for the files (default: temporary)")
    parser.add_argument("--round-trip", action="store_true", help="export the import again")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        work = args.work or Path(temporary)
        work.mkdir(parents=True, exist_ok=True)
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", file=sys.stderr)
        steps = [
            s
            for fmt in args.formats.split(",")
            for s in measure(args.db, fmt.strip(), work, args.round_trip)
        ]
    if args.json:
        print(json.dumps([asdict(s) for s in steps], indent=2))
        return 0
    print(f"{'step':<20} {'runs':>7} {'points':>9} {'wall s':>8} {'ms/run':>8} "
          f"{'peak MB':>8} {'file MB':>8}")  # fmt: skip
    for s in steps:
        print(f"{s.step:<20} {s.runs:>7} {s.measurements:>9} {s.wall_s:>8.1f} "
              f"{s.ms_per_run:>8.1f} {s.peak_rss_mb:>8.0f} {s.file_mb:>8.1f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
