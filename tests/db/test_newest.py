"""A node class's runs newest first (:mod:`benchdb.db.newest`), host by host and a page
at a time, come out in the order one query over the whole class gives: start time, then
id, newest first, across page boundaries, hosts and runs started at the same instant."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

import pytest
from sqlalchemy import select, update

from benchdb.db import newest
from benchdb.db.engine import Database
from benchdb.db.models import Run
from benchdb.db.runs import start_run
from benchdb.db.runstate import RunStatus, utcnow
from benchdb.db.scope import resolve_scope
from benchdb.machine import detect_machine


def _runs_on_two_hosts(db: Database) -> None:
    """23 runs over two hosts of this node class; several pairs share a start time."""
    hosts = [detect_machine(), dataclasses.replace(detect_machine(), hostname="node-b")]
    t0 = utcnow() - timedelta(days=30)
    for i in range(23):
        run = start_run(db, kind="kernels", config={}, machine=hosts[i % 3 == 0])
        with db.session() as s:
            s.execute(
                update(Run)
                .where(Run.id == run.id)
                .values(started_at=t0 + timedelta(hours=(i * 7) % 11), status=RunStatus.COMPLETE)
            )


def test_pages_of_each_host_merge_into_the_class_order(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    _runs_on_two_hosts(db)
    monkeypatch.setattr(newest, "PAGE", 3)  # several pages a host, ties across a page's end
    with db.session() as s:
        scope = resolve_scope(s)
        assert len(scope.host_ids) == 2
        expected = s.execute(
            select(Run.id, Run.started_at)
            .where(scope.runs())
            .order_by(Run.started_at.desc(), Run.id.desc())
        ).all()
        got = [(r.id, r.started_at) for r in newest.runs_newest_first(s, scope)]
        rows = list(newest.runs_newest_first(s, scope, columns=(Run.machine_id,)))
        older = list(newest.runs_newest_first(s, None, Run.started_at < expected[4].started_at))
    assert got == [tuple(r) for r in expected]
    assert [r.id for r in rows] == [r.id for r in expected]
    assert {r.machine_id for r in rows} == set(scope.host_ids)
    assert [r.id for r in older] == [r.id for r in expected if r.started_at < expected[4][1]]
