"""A baseline reset with a reason (``benchdb baseline set --reason``) and where history shows it.

Synthetic runs with a known step (rows.py ``add_run``): ``stream.triad`` 25 %
slower from the fifth run on; the baseline is reset to that run, with a reason.
"""

from __future__ import annotations

import json

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from benchdb.db.engine import Database, open_database
from benchdb.db.models import Baseline, BaselineChange
from tests.clihelpers import assert_user_error, benchdb
from tests.db.revisions import add_this_run, engine_at

from .rows import add_run
from .test_regress_cli import cli, points

REASON = "bounds checks on (#48): triad +25%, accepted"


@pytest.fixture
def stepped(db: Database) -> list[int]:
    runs = [add_run(db, points(), tags=[f"r{i}"]) for i in range(4)]
    runs += [add_run(db, points({"stream.triad": 1.25}), tags=[f"s{i}"]) for i in range(3)]
    return runs


def changes(db: Database) -> int:
    with db.session() as s:
        return s.scalar(select(func.count()).select_from(BaselineChange))


def test_reset_with_a_reason_is_shown_by_baseline_show_and_history(
    db_url: str, db: Database, stepped: list[int]
) -> None:
    assert cli("baseline", "set", str(stepped[0]), "--db", db_url).returncode == 0
    proc = cli("baseline", "set", str(stepped[4]), "--reason", REASON, "--db", db_url)
    assert proc.returncode == 0
    assert f"is now run {stepped[4]} (was run {stepped[0]}): {REASON}" in " ".join(
        proc.stdout.split()
    )
    (shown,) = json.loads(cli("baseline", "show", "--db", db_url, "--json").stdout)
    assert (shown["run_id"], shown["reason"]) == (stepped[4], REASON)
    # compare against the new baseline: the accepted step no longer fails
    assert cli("compare", "baseline", "latest", "--db", db_url).returncode == 0

    out = json.loads(cli("history", "--kernel", "stream.triad", "--db", db_url, "--json").stdout)
    assert [(c["run_id"], c["previous_run_id"], c["reason"]) for c in out["baseline_changes"]] == [
        (stepped[0], None, None),
        (stepped[4], stepped[0], REASON),
    ]
    for series in out["series"]:
        (step,) = series["steps"]
        assert step["run_id"] == stepped[4]
        assert step["baseline_reset"]["run_id"] == stepped[4]
        assert step["baseline_reset"]["reason"] == REASON
    table = cli("history", "--kernel", "stream.triad", "--shape", "4000", "--db", db_url)
    assert "baseline resets of" in table.stdout and "accepted" in table.stdout  # 80 columns
    quiet = json.loads(cli("history", "--kernel", "stream.copy", "--db", db_url, "--json").stdout)
    assert all(s["steps"] == [] for s in quiet["series"])


def test_a_step_without_a_reset_has_none(db_url: str, db: Database, stepped: list[int]) -> None:
    out = json.loads(cli("history", "--kernel", "stream.triad", "--db", db_url, "--json").stdout)
    assert out["baseline_changes"] == []
    assert {s["steps"][0]["baseline_reset"] is None for s in out["series"]} == {True}


@pytest.mark.parametrize(
    ("reason", "needle"),
    [("   ", "--reason is empty"), ("x" * 501, "keep it under 500")],
    ids=["blank", "long"],
)
def test_a_bad_reason_is_one_line_exit_2_and_writes_nothing(
    sqlite_url: str, reason: str, needle: str
) -> None:
    db = open_database(sqlite_url)
    run = add_run(db, points(), tags=["a"])
    proc = benchdb("baseline", "set", str(run), "--reason", reason, "--db", sqlite_url)
    assert_user_error(proc, needle)
    assert changes(db) == 0
    with db.session() as s:
        assert s.scalar(select(func.count()).select_from(Baseline)) == 0


def test_migration_0007_keeps_a_pinned_baseline_as_its_first_change(db_url: str) -> None:
    engine = engine_at(db_url, "0006")
    with Session(engine) as s, s.begin():
        run = add_this_run(s, status="complete")
        run_id, class_id = run.id, run.node_class_id
        s.execute(
            text("INSERT INTO baseline (node_class_id, run_id, set_at) VALUES (:c, :r, :t)"),
            {"c": class_id, "r": run_id, "t": run.started_at},
        )
    engine.dispose()
    db = open_database(db_url)  # upgrades to head through 0007
    with db.session() as s:
        (change,) = s.scalars(select(BaselineChange)).all()
        assert (change.node_class_id, change.run_id) == (class_id, run_id)
        assert change.reason is None and change.previous_run_id is None
    db.close()
