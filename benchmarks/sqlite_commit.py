"""What does a durable SQLite commit cost, against the sample time a collection spends per commit?

A collection commits once per pass of each point (collectors/record.py).  This times
commits of one small row into a WAL-mode file under ``PRAGMA synchronous`` NORMAL and
FULL, in a temporary folder on the same disk as ``--dir`` (default: the system's
temporary folder), and prints median and p90 per setting.

    python benchmarks/sqlite_commit.py --commits 300 --dir .

Figures: docs/findings/sqlite.md.
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
import time
from pathlib import Path

import numpy as np


def commit_times(path: Path, synchronous: str, commits: int, row_bytes: int) -> np.ndarray:
    """Seconds per ``BEGIN IMMEDIATE; INSERT; COMMIT`` of one row, as benchdb writes a pass."""
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute(f"PRAGMA synchronous={synchronous}")
    con.execute("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, payload BLOB)")
    payload = b"x" * row_bytes
    out = np.empty(commits)
    for i in range(commits):
        t0 = time.perf_counter()
        con.execute("BEGIN IMMEDIATE")
        con.execute("INSERT INTO t (payload) VALUES (?)", (payload,))
        con.execute("COMMIT")
        out[i] = time.perf_counter() - t0
    con.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--commits", type=int, default=300)
    ap.add_argument("--row-bytes", type=int, default=2048)
    ap.add_argument("--dir", type=Path, default=None, help="a folder on the disk to test")
    args = ap.parse_args()
    if args.commits < 10:
        ap.error("--commits must be at least 10")
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        print(f"{args.commits} commits of {args.row_bytes} B each, WAL mode, in {tmp}")
        for mode in ("NORMAL", "FULL"):
            t = commit_times(Path(tmp) / f"{mode}.sqlite", mode, args.commits, args.row_bytes)
            med, p90 = np.median(t) * 1e3, np.percentile(t, 90) * 1e3
            print(f"synchronous={mode:<6}  median {med:.3f} ms  p90 {p90:.3f} ms")


if __name__ == "__main__":
    main()
