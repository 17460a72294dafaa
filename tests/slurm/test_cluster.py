"""Real jobs on a real Slurm cluster of 2 nodes (scripts/slurm-local-cluster.sh runs one on a
single host), writing into the real PostgreSQL, a fresh schema per test.

* ``slurm collect`` on 2 nodes: rows from both hosts, of one node class; the password of
  the URL reaches the job in its environment, and no script or output holds it;
* ``slurm comm`` on 2 nodes: every point inter-node, fitted as such;
* a comm job cancelled mid-way (scancel: SIGTERM, then SIGKILL) is continued by the same
  job submitted again, even from another node: no point lost, none twice;
* an unknown partition is refused before anything is submitted.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy import func, select

from benchdb.comm.store import fit_models
from benchdb.db.engine import open_database
from benchdb.db.models import CommMeasurement, Machine, Measurement, Run
from benchdb.slurm.jobs import job_ended
from tests.clihelpers import assert_user_error

from . import cluster

pytestmark = pytest.mark.slurm


@pytest.fixture
def two_nodes() -> None:
    cluster.require_nodes(2)


def test_collect_on_two_nodes_fills_one_database(  # type: ignore[no-untyped-def]
    two_nodes, secret: str, secret_url: str, tmp_path
) -> None:
    """Both nodes write into one database named with a password, which the job gets in its
    environment and which neither the script, Slurm's copy of it, its output nor a row holds."""
    job = cluster.submit(
        "collect", "--nodes", "2", "--db", secret_url,
        "--quick", "--kernels", "stream.triad", "--footprints", "64KiB,4MiB", cwd=tmp_path,
    )  # fmt: skip
    assert not job_ended(str(job["job_id"]))  # pending or running: its runs are not stale
    kept = cluster.batch_script(job["job_id"])
    assert " collect --db " in kept
    assert cluster.wait(job["job_id"]) == "COMPLETED", Path(job["output"]).read_text()
    assert job_ended(str(job["job_id"])) and job_ended("987654321")
    for text in (job["script"], kept, Path(job["output"]).read_text()):
        assert secret not in text
    db = open_database(secret_url)
    with db.session() as s:
        runs = s.scalars(select(Run)).all()
        assert sorted(r.status for r in runs) == ["complete", "complete"]  # both connected
        assert not any(secret in r.command for r in runs)
        hosts = {r.machine.hostname for r in runs}
        classes = {r.machine.node_class_id for r in runs}
        points = s.scalar(select(func.count()).select_from(Measurement))
        assert s.scalar(select(func.count()).select_from(Machine)) == 2
    db.close()
    assert len(hosts) == 2 and len(classes) == 1, (hosts, classes)
    assert points == 2 * 2  # 2 footprints on each node


def _comm_points(url: str) -> list[tuple]:
    db = open_database(url)
    with db.session() as s:
        rows = s.scalars(select(CommMeasurement).order_by(CommMeasurement.id)).all()
        out = [(r.id, r.run_id, r.benchmark, r.placement, r.nodes, r.message_bytes, r.params_key)
               for r in rows]  # fmt: skip
    db.close()
    return out


def test_comm_on_two_nodes_measures_between_nodes(two_nodes, postgres_url: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    job = cluster.submit(
        "comm", "--nodes", "2", "--db", postgres_url, "--benchmarks", "pingpong,exchange",
        "--sizes", "8,512,4096,32768", "--samples", "3", "--min-sample-time", "0.0005",
        cwd=tmp_path,
    )  # fmt: skip
    assert cluster.wait(job["job_id"]) == "COMPLETED", Path(job["output"]).read_text()
    points = _comm_points(postgres_url)
    assert len(points) == 8
    assert {(p[3], p[4]) for p in points} == {("inter-node", 2)}
    db = open_database(postgres_url)
    with db.session() as s:
        (run,) = s.scalars(select(Run)).all()
        assert run.status == "complete" and run.config["hosts"] == ["n1", "n2"]
    _scope, _run, models = fit_models(db, host="n1")
    db.close()
    assert {(m.kind, m.subject) for m in models} == {
        ("comm.postal", "inter-node"),
        ("comm.exchange", "inter-node"),
        ("comm.maxrate", "inter-node"),
    }


def test_a_cancelled_comm_job_is_continued(two_nodes, postgres_url: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    args = [
        "comm", "--nodes", "2", "--db", postgres_url, "--benchmarks", "pingpong",
        "--sizes", ",".join(str(8 << i) for i in range(12)), "--samples", "5",
        "--min-sample-time", "0.05",
    ]  # fmt: skip
    first = cluster.submit(*args, cwd=tmp_path)
    deadline = time.monotonic() + cluster.HANG_GUARD_S
    while len(_comm_points(postgres_url)) < 2 and time.monotonic() < deadline:
        time.sleep(0.5)
    subprocess.run(["scancel", str(first["job_id"])], check=True)
    cluster.wait(first["job_id"])
    before = _comm_points(postgres_url)
    assert 2 <= len(before) < 12, before  # cancelled mid-way, the measured points kept
    db = open_database(postgres_url)
    with db.session() as s:
        run = s.scalars(select(Run)).one()
        assert run.config["slurm_job"] == str(first["job_id"])
        # As if rank 0 had run on another node: its process id says nothing here, the
        # ended Slurm job must (a rank killed inside MPI leaves the run "running").
        run.hostname = "another-node"
    db.close()
    second = cluster.submit(*args, cwd=tmp_path)
    assert cluster.wait(second["job_id"]) == "COMPLETED", Path(second["output"]).read_text()
    after = _comm_points(postgres_url)
    assert after[: len(before)] == before  # nothing lost
    assert len(after) == 12 and len({p[2:] for p in after}) == 12  # nothing twice
    db = open_database(postgres_url)
    with db.session() as s:
        (run,) = s.scalars(select(Run)).all()
        assert run.status == "complete"
    db.close()
    assert '"resumed": true' in Path(second["output"]).read_text()


def test_an_unknown_partition_is_refused_and_nothing_submitted(two_nodes, tmp_path) -> None:  # type: ignore[no-untyped-def]
    before = subprocess.run(["squeue", "-h", "-o", "%i"], capture_output=True, text=True).stdout
    proc = subprocess.run(
        [sys.executable, "-m", "benchdb", "slurm", "collect", "--nodes", "2", "-p", "nosuch",
         "--db", "postgresql+psycopg://nobody@127.0.0.1:1/none", "--quick"],
        capture_output=True, text=True, cwd=tmp_path, timeout=120,
    )  # fmt: skip
    assert_user_error(proc, "unknown partition 'nosuch'")
    after = subprocess.run(["squeue", "-h", "-o", "%i"], capture_output=True, text=True).stdout
    assert after == before and list(tmp_path.iterdir()) == []
