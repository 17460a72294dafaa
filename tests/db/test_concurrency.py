"""Processes creating the schema, registering machines and runs at the same moment all
succeed, and leave one row per node class, host and environment."""

from __future__ import annotations

import multiprocessing as mp

from sqlalchemy import func, select

from benchdb.db.engine import open_database
from benchdb.db.models import Environment, Machine, NodeClass, Run
from benchdb.runs import finish_run, start_run


def _worker(url: str, barrier, n: int, out, open_first: bool = True) -> None:  # type: ignore[no-untyped-def]
    try:
        if not open_first:
            barrier.wait()  # all open the new database at once: the schema-creation race
        db = open_database(url)
        if open_first:
            barrier.wait()
        for _ in range(n):
            run = start_run(db, kind="test", config={"worker": True})
            finish_run(db, run.id, "complete")
        out.put("ok")
    except Exception as exc:  # reported to the parent, which fails the test
        out.put(repr(exc))


def test_two_processes_register_at_once(db_url: str) -> None:
    open_database(db_url).close()  # schema first, so the race is on the rows
    ctx = mp.get_context("spawn")
    barrier, out = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(db_url, barrier, 10, out)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    results = [out.get(timeout=5) for _ in procs]
    assert results == ["ok", "ok"]
    db = open_database(db_url)
    with db.session() as s:
        assert s.scalar(select(func.count()).select_from(Machine)) == 1
        assert s.scalar(select(func.count()).select_from(Run)) == 20
        assert s.scalar(select(func.count()).where(Run.status != "complete")) == 0
    db.close()


def test_four_processes_create_the_schema_at_once(db_url: str) -> None:
    """The very first open races too: all create-or-upgrade the same empty database.
    (On PostgreSQL, without the migration lock, 3 of 4 failed on alembic_version.)"""
    ctx = mp.get_context("spawn")
    barrier, out = ctx.Barrier(4), ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(db_url, barrier, 2, out, False)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [out.get(timeout=5) for _ in procs] == ["ok"] * 4
    db = open_database(db_url)
    with db.session() as s:
        for model in (NodeClass, Machine, Environment):
            assert s.scalar(select(func.count()).select_from(model)) == 1
        assert s.scalar(select(func.count()).select_from(Run)) == 8
    db.close()
