"""Fitting from the database, storing models idempotently, loading them for prediction."""

from __future__ import annotations

import pytest
from benchdb.collectors.mpi.results import CommPoint, write_run
from sqlalchemy import func, select

from benchdb.comm import load_machine_file
from benchdb.comm.store import fit_models, load_params
from benchdb.db.models import CommMeasurement, Model, Run
from benchdb.errors import UserError

from .synthetic import lassen_pingpong


def _points() -> list[CommPoint]:
    """Ping-pong and allreduce points whose times follow Lassen's intra-socket table."""
    return [
        *lassen_pingpong(),
        CommPoint("allreduce", 2, 1, 1, "intra-node", 8, "", {}, 10, [3e-6] * 5),
    ]


def test_fit_store_load_round_trip(db) -> None:  # type: ignore[no-untyped-def]
    run_id = write_run(db, _points(), config={"ranks": 2}, tags=["t"])
    _machine, run, rows = fit_models(db)
    assert run.id == run_id
    kinds = sorted((r.kind, r.subject) for r in rows)
    assert kinds == [
        ("comm.allreduce", "allreduce"),
        ("comm.maxrate", "intra-socket"),
        ("comm.postal", "intra-socket"),
    ]
    postal = next(r for r in rows if r.kind == "comm.postal")
    assert postal.accuracy["median_rel_error"] < 0.02
    assert postal.selector["run_id"] == run_id and len(postal.data_hash) == 64
    # the same data again: no new model rows
    fit_models(db)
    with db.session() as s:
        assert s.scalar(select(func.count()).select_from(Model)) == 3
        assert s.scalar(select(func.count()).select_from(CommMeasurement)) == len(_points())
        assert s.scalars(select(Run)).one().status == "complete"
    params = load_params(db)
    assert params.postal["intra-socket"].time(1 << 20) == pytest.approx(
        load_machine_file("lassen").postal["intra-socket"].time(1 << 20), rel=0.05
    )
    assert params.maxrate["intra-socket"][0].form == "postal"  # one k only: fallback
    seconds, method, _ = params.allreduce.time(2, 8, params.postal["intra-socket"].time)
    assert (seconds, method) == (3e-6, "measured")


def test_no_comm_data_is_a_user_error(db) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UserError):
        fit_models(db)


def test_runs_list_counts_a_comm_runs_points(db) -> None:  # type: ignore[no-untyped-def]
    from benchdb.db.runs import stored_runs

    run_id = write_run(db, _points(), config={"ranks": 2}, tags=[])
    (row,) = stored_runs(db)
    assert (row["id"], row["kind"], row["measurements"]) == (run_id, "comm", len(_points()))
