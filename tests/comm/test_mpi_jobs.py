"""Real MPI jobs under mpiexec: 2 ranks, a handful of sizes, short samples.

The job is started exactly as ``benchdb comm collect`` starts it
(:mod:`benchdb.collectors.mpi.launcher`).  The fault cases use the test-only
``BENCHDB_COMM_TEST_FAULT`` to make rank 1 fail after the second measured
point and check that the whole job ends with mpiexec's exit code and one line,
that the points measured before the failure are stored, and that the same job
started again continues the run: no point lost, none twice.
"""

from __future__ import annotations

import os

import pytest
from benchdb.collectors.mpi import launcher
from benchdb.collectors.mpi.faults import ENV as FAULT_ENV
from sqlalchemy import func, select

from benchdb.comm.halo_validation import halo_validation
from benchdb.comm.store import fit_models, load_params
from benchdb.db.comm_models import comm_frame
from benchdb.db.models import CommMeasurement, Model, Run
from benchdb.errors import UserError
from benchdb.evidence import from_columns
from tests.needs import missing

pytestmark = pytest.mark.mpi

QUICK = ["--samples", "3", "--min-sample-time", "0.0005"]


@pytest.fixture(scope="module")
def mpiexec() -> str:
    try:
        return launcher.find_mpiexec()
    except UserError as exc:
        missing(f"no mpiexec: {exc}", "BENCHDB_REQUIRE_MPI")


def _run(mpiexec: str, url: str, *args: str) -> launcher.JobResult:
    cmd = launcher.command(mpiexec, 2, ["--db", url, "--progress", *QUICK, *args])
    return launcher.run_job(cmd, timeout=120)


def test_collect_fit_and_check_the_halo(mpiexec: str, sqlite_url: str) -> None:
    from benchdb.db.engine import open_database

    db = open_database(sqlite_url)
    progress: list[dict] = []
    cmd = launcher.command(
        mpiexec, 2,
        ["--db", db.url, "--progress", *QUICK, "--benchmarks", "pingpong,exchange,halo2d,allreduce",
         "--sizes", "8,64,512,4096,8192,32768,262144", "--halo-local", "32",
         "--halo-fields", "2", "--allreduce-bytes", "8"],
    )  # fmt: skip
    result = launcher.run_job(cmd, on_progress=progress.append, timeout=120)
    assert progress[-1]["done"] == progress[-1]["total"] == 7 + 7 + 1 + 1
    with db.session() as s:
        run = s.scalars(select(Run)).one()
        assert (run.kind, run.status, run.id) == ("comm", "complete", result.summary["run_id"])
        rows = s.scalars(select(CommMeasurement)).all()
    assert sorted({r.benchmark for r in rows}) == ["allreduce", "exchange", "halo2d", "pingpong"]
    assert all((len(r.samples) == 3 or "disturbed" in r.flags) and r.t_min > 0 for r in rows)
    # each sample carries the evidence of the rank that lost the most; disturbed ones
    # are set aside (and were retaken by both ranks)
    assert all(len(r.evidence["wall_s"]) == len(r.samples) for r in rows)
    for r in rows:
        n = len(r.set_aside.get("t_s", []))
        assert all(e is not None and e.disturbed for e in from_columns(r.set_aside, n))
    halo = next(r for r in rows if r.benchmark == "halo2d")
    assert len(halo.params["mpi_x_samples"]) == len(halo.samples)  # the same samples kept
    pp = sorted((r for r in rows if r.benchmark == "pingpong"), key=lambda r: r.message_bytes)
    assert {r.placement for r in pp} == {"intra-socket"} or {r.placement for r in pp} == {
        "intra-node"
    }
    # a 256 KiB message takes longer than an 8-byte one, whatever the load
    assert pp[-1].t_median > 2 * pp[0].t_median
    fit_models(db)
    params = load_params(db)
    assert set(params.exchange) == set(params.postal)  # the Sendrecv fit, per placement
    (check,) = halo_validation(comm_frame(db, run.id), params)
    assert check["predicted_s"] > 0 and check["measured_mpi_s"] > 0
    assert check["measured_total_s"] >= check["measured_mpi_s"]
    assert check["label"] == "32x32 h1 f2"  # --halo-local 32, --halo-fields 2, halo width 1


def _points(url: str) -> list[tuple]:
    from benchdb.db.engine import open_database

    db = open_database(url)
    with db.session() as s:
        rows = s.scalars(select(CommMeasurement).order_by(CommMeasurement.id)).all()
        out = [(r.id, r.run_id, r.benchmark, r.placement, r.message_bytes, r.params_key)
               for r in rows]  # fmt: skip
    db.close()
    return out


@pytest.mark.parametrize(("fault", "needle"), [("raise:1", "rank 1"), ("kill:1", "signal 9")])
def test_a_failed_rank_ends_the_job_and_the_same_job_continues_it(
    mpiexec: str, sqlite_url: str, monkeypatch: pytest.MonkeyPatch, fault: str, needle: str
) -> None:
    job = ["--benchmarks", "pingpong,allreduce", "--sizes", "8,64,512", "--allreduce-bytes", "8"]
    monkeypatch.setitem(os.environ, FAULT_ENV, fault)
    with pytest.raises(UserError) as err:
        _run(mpiexec, sqlite_url, *job)
    message = str(err.value)
    assert "mpiexec exit code" in message and needle in message
    assert "continues the run" in message and "\n" not in message
    before = _points(sqlite_url)
    assert 1 <= len(before) <= 2  # the fault comes after the second point of 4
    monkeypatch.delitem(os.environ, FAULT_ENV)
    result = _run(mpiexec, sqlite_url, *job)
    assert result.summary["resumed"] is True
    assert result.summary["measured"] == 4 - len(before)
    after = _points(sqlite_url)
    assert after[: len(before)] == before  # nothing measured before the failure is lost
    assert len(after) == 4 and len({p[2:] for p in after}) == 4  # no point twice
    assert {p[1] for p in after} == {result.summary["run_id"]}
    from benchdb.db.engine import open_database

    db = open_database(sqlite_url)
    with db.session() as s:
        assert [r.status for r in s.scalars(select(Run))] == ["complete"]
        assert s.scalar(select(func.count()).select_from(Model)) == 0
    db.close()
