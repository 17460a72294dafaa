"""How many of N processes opening one new database at the same instant fail?

What the nodes of a new batch job do when each starts ``benchdb collect`` into a
database nobody has used yet.  Each trial makes a fresh PostgreSQL schema (or SQLite
file), starts N processes that wait at a barrier, then open the database (creating the
schema) and store a run each; it prints each trial's failures and their first line.

    python benchmarks/new_database_race.py --trials 10
    python benchmarks/new_database_race.py --backend sqlite --processes 8

Figures: docs/findings/many-writers.md.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import tempfile
import uuid
from collections import Counter
from pathlib import Path
from urllib.parse import quote

from sqlalchemy import create_engine, text

PG = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


def _worker(url: str, barrier, out) -> None:  # type: ignore[no-untyped-def]
    from benchdb.db.engine import open_database
    from benchdb.db.runs import finish_run, start_run

    barrier.wait()
    try:
        db = open_database(url)
        finish_run(db, start_run(db, kind="race", config={}).id, "complete")
        out.put("ok")
    except Exception as exc:  # counted by the parent
        out.put(f"{type(exc).__name__}: {str(exc).splitlines()[0][:100]}")


def trial(url: str, processes: int) -> list[str]:
    ctx = mp.get_context("spawn")
    barrier, out = ctx.Barrier(processes), ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(url, barrier, out)) for _ in range(processes)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(300)
    return [out.get(timeout=10) for _ in procs]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["postgres", "sqlite"], default="postgres")
    parser.add_argument("--postgres", default=PG, help="server URL (a schema per trial)")
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--trials", type=int, default=5)
    args = parser.parse_args()
    admin = create_engine(args.postgres) if args.backend == "postgres" else None
    failed = Counter[str]()
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.trials):
            if admin is None:
                url = f"sqlite:///{Path(tmp) / f'race{i}.sqlite'}"
            else:
                schema = f"race_{uuid.uuid4().hex[:10]}"
                with admin.begin() as conn:
                    conn.execute(text(f'CREATE SCHEMA "{schema}"'))
                url = f"{args.postgres}?options={quote(f'-csearch_path={schema}')}"
            results = trial(url, args.processes)
            bad = [r for r in results if r != "ok"]
            failed.update(bad)
            print(f"trial {i + 1}: {len(bad)} of {args.processes} failed")
            if admin is not None:
                with admin.begin() as conn:
                    conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
    total = sum(failed.values())
    print(f"{total} of {args.trials * args.processes} processes failed")
    for reason, n in failed.most_common():
        print(f"  {n} x {reason}")


if __name__ == "__main__":
    main()
