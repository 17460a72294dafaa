"""The two runs of an A/B pair start, end and are claimed together.

CI once killed ``benchdb ab`` between the two runs' ends: the change run was
``complete``, the base run ``running``, and the same command then refused to continue
("taken by another `benchdb ab`").  Their ends are now one transaction, and a claim takes
both runs or neither.  Real SQLite file and the PostgreSQL of ``postgres_url``.
"""

from __future__ import annotations

import pytest

from benchdb.db import resume
from benchdb.db.engine import Database
from benchdb.db.models import Run
from benchdb.db.runs import run_lifecycle, this_process_run


def _pair(db: Database, base: str, change: str) -> tuple[int, int]:
    with db.session() as s:
        runs = [
            this_process_run(s, kind=resume.RUN_KIND, status="running", config={}) for _ in range(2)
        ]
        runs[0].status, runs[1].status = base, change
        return runs[0].id, runs[1].id


def _statuses(db: Database, *ids: int) -> list[str]:
    with db.reading() as s:
        return [s.get_one(Run, i).status for i in ids]


def test_a_claim_takes_both_runs_or_neither(db: Database) -> None:
    base, change = _pair(db, "interrupted", "complete")
    assert not resume.claim(db, base, change)
    assert _statuses(db, base, change) == ["interrupted", "complete"]  # base not left taken
    base, change = _pair(db, "interrupted", "failed")
    assert resume.claim(db, base, change)
    assert _statuses(db, base, change) == ["running", "running"]
    assert not resume.claim(db, base, change)  # taken now


def test_a_claim_of_a_missing_run_takes_nothing(db: Database) -> None:
    base, _ = _pair(db, "interrupted", "interrupted")
    assert not resume.claim(db, base, 10**9)
    assert _statuses(db, base) == ["interrupted"]


@pytest.mark.parametrize(
    ("raised", "status"),
    [(None, "complete"), (KeyboardInterrupt, "interrupted"), (ValueError, "failed")],
)
def test_the_runs_of_a_lifecycle_end_together(
    db: Database, raised: type[BaseException] | None, status: str
) -> None:
    base, change = _pair(db, "running", "running")
    try:
        with run_lifecycle(db, base, change):
            if raised is not None:
                raise raised
    except (KeyboardInterrupt, ValueError):
        pass
    assert _statuses(db, base, change) == [status, status]
    with db.reading() as s:
        ends = {s.get_one(Run, i).ended_at for i in (base, change)}
    assert len(ends) == 1 and None not in ends  # one transaction, one moment
