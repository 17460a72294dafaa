"""A node class's runs, newest first, read a page at a time, host by host.

``latest``, ``previous``, a replicate's baseline runs and the newest run of a kernel all
want the newest few of a history of 10^5 runs.  One query ordered by start time over the
class's hosts (``machine_id IN (...)``) makes the database collect and sort every run of
the class before the first row: 0.5 s at 10^5 runs on SQLite, on every such question
(docs/findings/scale.md).  Here each host's runs are read newest first through the
index on ``(machine_id, started_at, id)``, ``PAGE`` at a time with a keyset (the last
row's start time and id), and the hosts' pages merged: a question answered by the newest
runs reads one page per host.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from typing import Any

from sqlalchemy import ColumnElement, select, tuple_
from sqlalchemy.orm import Session

from .models import Run
from .scope import Scope

PAGE = 200
"""Runs read at a time from each host."""


def runs_newest_first(
    session: Session,
    scope: Scope | None,
    *where: ColumnElement[bool],
    columns: tuple[Any, ...] | None = None,
) -> Iterator[Any]:
    """The runs of ``scope`` (every run for None) meeting ``where``, newest first (start
    time, then id).  :class:`Run` objects, or with ``columns`` rows of ``Run.id``,
    ``Run.started_at`` and those columns."""
    hosts = (None,) if scope is None else scope.host_ids
    streams = [_host_newest_first(session, host, where, columns) for host in hosts]
    yield from heapq.merge(*streams, key=lambda r: (r.started_at, r.id), reverse=True)


def _host_newest_first(
    session: Session,
    host: int | None,
    where: tuple[ColumnElement[bool], ...],
    columns: tuple[Any, ...] | None,
) -> Iterator[Any]:
    stmt = (select(Run) if columns is None else select(Run.id, Run.started_at, *columns)).where(
        *where
    )
    if host is not None:
        stmt = stmt.where(Run.machine_id == host)
    stmt = stmt.order_by(Run.started_at.desc(), Run.id.desc()).limit(PAGE)
    after = None
    while True:
        paged = stmt if after is None else stmt.where(tuple_(Run.started_at, Run.id) < after)
        result = session.execute(paged)
        rows = result.scalars().all() if columns is None else result.all()
        yield from rows
        if len(rows) < PAGE:
            return
        after = (rows[-1].started_at, rows[-1].id)
