"""Real jobs on a real Slurm cluster of 2 nodes (scripts/slurm-local-cluster.sh runs one on a
single host), writing into the real PostgreSQL, a fresh schema per test.

* ``slurm collect`` on 2 nodes: rows from both hosts, of one node class; the password of
  the URL reaches the job in its environment, and no script or output holds it;
* ``slurm comm`` on 2 nodes: every point inter-node, fitted as such;
* a comm job cancelled mid-way (scancel: SIGTERM, then SIGKILL) is continued by the same
  job submitted again with its rank 0 on the other node: the same run, under the new job's
  id (so no collector elsewhere takes it for stale), no point lost, none twice;
* an unknown partition, more nodes than the partition has, and bad collect options are
  refused before anything is submitted, dry run or not;
* ``--wait`` follows a job to its end and prints its result: exit 0 and the run it wrote,
  or exit 1 with the end of its output;
* a rank killed outright ends the whole comm job (srun ``--kill-on-bad-exit``), which
  otherwise held both nodes for good.

A test's jobs still queued when it ends (it failed, or timed out waiting) are cancelled,
so that the next tests' jobs do not pend behind them.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select

from benchdb.comm.store import fit_models
from benchdb.db.engine import open_database
from benchdb.db.models import AppRun, CommMeasurement, Machine, Measurement, Run
from benchdb.db.runs import mark_stale_runs
from benchdb.slurm.jobs import job_ended
from tests.clihelpers import assert_user_error

from . import cluster

# alone: one cluster, whose jobs another test's would meet in the queue, on this host's CPUs
pytestmark = [pytest.mark.slurm, pytest.mark.alone]


@pytest.fixture
def two_nodes(request: pytest.FixtureRequest) -> Iterator[None]:
    """2 usable nodes, and afterwards none of this test's jobs left in the queue
    (:func:`cluster.cancel_jobs_left`): a job the test left behind would make the next
    tests' jobs pend, and fail them too, for a cause that is not theirs.  The test's
    schema is made first, so that it is dropped after its jobs have ended: a job still
    writing holds locks the drop would wait on."""
    cluster.require_nodes(2)
    if "postgres_url" in request.fixturenames:
        request.getfixturevalue("postgres_url")
    before = cluster.queue()
    yield
    cluster.cancel_jobs_left(before)


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


def _run(url: str) -> Run:
    db = open_database(url)
    with db.session() as s:
        (run,) = s.scalars(select(Run)).all()
        assert run.machine.hostname  # loaded while the session is open
        s.expunge(run)
    db.close()
    return run


def test_a_cancelled_comm_job_is_continued_wherever_its_rank_0_lands(  # type: ignore[no-untyped-def]
    two_nodes, postgres_url: str, tmp_path
) -> None:
    """Cancelled mid-way, submitted again with rank 0 on the other node (of the same node
    class): the same run goes on, under the new job's id, and ends with every point once.

    The nodes here have 1 CPU each, so a 2-rank job cannot fit on one node while the other
    is held busy; srun's arbitrary distribution puts the second job's rank 0 on the node
    that held rank 1 instead, which is what a resubmitted job meets on a cluster."""
    sizes = ",".join(str(8 << i) for i in range(16))
    args = [
        "comm", "--nodes", "2", "--db", postgres_url, "--benchmarks", "pingpong",
        "--sizes", sizes, "--samples", "5", "--min-sample-time", "0.05",
    ]  # fmt: skip
    nodes = ["n1", "n2"]
    env = cluster.rank_0_on("n1", nodes, tmp_path)
    first = cluster.submit(*args, cwd=tmp_path, env=env)
    deadline = time.monotonic() + cluster.HANG_GUARD_S
    starts = 1
    while len(_comm_points(postgres_url)) < 2 and time.monotonic() < deadline:
        if cluster.state(first["job_id"]) in cluster.FINAL:  # ended before 2 points
            output = Path(first["output"]).read_text()
            assert cluster.mpi_start_failed(output) and starts < 3, output
            first = cluster.submit(*args, cwd=tmp_path, env=env)
            starts += 1
        time.sleep(0.5)
    subprocess.run(["scancel", str(first["job_id"])], check=True)
    cluster.wait(first["job_id"])
    before = _comm_points(postgres_url)
    assert 2 <= len(before) < 16, before  # cancelled mid-way, the measured points kept
    run = _run(postgres_url)
    assert run.config["slurm_job"] == str(first["job_id"]) and run.machine.hostname == "n1"
    first_pid = run.pid

    second = cluster.submit(*args, cwd=tmp_path, env=cluster.rank_0_on("n2", nodes, tmp_path))
    while _run(postgres_url).pid == first_pid and time.monotonic() < deadline:
        time.sleep(0.2)  # until the second job's rank 0 has claimed the run
    # A collector on another host, while the job measures: the run names a live job.
    db = open_database(postgres_url)
    with db.session() as s:
        s.scalars(select(Run)).one().hostname = "another-host"
    mark_stale_runs(db)
    db.close()
    during = _run(postgres_url)
    assert during.status == "running", "a live job's run was taken for stale"
    assert during.config["slurm_job"] == str(second["job_id"])

    assert cluster.wait(second["job_id"]) == "COMPLETED", Path(second["output"]).read_text()
    after = _comm_points(postgres_url)
    assert after[: len(before)] == before  # nothing lost
    assert len(after) == 16 and len({p[2:] for p in after}) == 16  # nothing twice
    assert {p[1] for p in after} == {run.id}  # one run
    run = _run(postgres_url)
    assert run.status == "complete" and run.config["hosts"] == ["n1", "n2"]
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


NOWHERE = "postgresql+psycopg://nobody@127.0.0.1:1/none"  # nothing may connect to it
REFUSED_BEFORE_SUBMITTING = [
    (["collect", "-N", "3", "--dry-run"], "--nodes 3: partition debug has 2 node(s)"),
    (["comm", "-N", "3", "-p", "debug"], "--nodes 3: partition debug has 2 node(s)"),
    (["collect", "-N", "2", "-k", "nosuch", "--quick"], "unknown kernel 'nosuch'"),
    (["collect", "-N", "2", "--sizes", "0x5"], "shape '0x5' has a zero"),
    (["collect", "-N", "2", "--time", "banana"], "--time 'banana' is not a Slurm time limit"),
    (["collect", "-N", "2", "--threads", "64", "--dry-run"], "a node of partition debug has"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("args", "needle"), REFUSED_BEFORE_SUBMITTING, ids=[n for _, n in REFUSED_BEFORE_SUBMITTING]
)
def test_options_the_job_would_fail_on_are_refused_before_submitting(  # type: ignore[no-untyped-def]
    two_nodes, args: list[str], needle: str, tmp_path
) -> None:
    """Checked against the partition (sinfo) and by collect's own checks, dry run or not:
    one line, exit 2, no job, no file, no database touched."""
    before = cluster.queue()
    proc = cluster.slurm(*args, "--db", NOWHERE, cwd=tmp_path)
    assert_user_error(proc, needle)
    assert cluster.queue() == before and list(tmp_path.iterdir()) == []


COMM_SMALL = ["comm", "-N", "2", "--benchmarks", "pingpong", "--sizes", "8,512,4096,32768",
              "--samples", "3", "--min-sample-time", "0.0005", "--wait"]  # fmt: skip


def test_wait_follows_the_job_and_prints_its_result(two_nodes, postgres_url: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    done = cluster.slurm(*COMM_SMALL, "--db", postgres_url, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr
    run = _run(postgres_url)
    # where it ran is in the result: a short job can start and end between two polls,
    # so a "running" progress line is not certain
    assert re.search(
        rf"COMPLETED on n\[1-2\] after \d\d:\d\d:\d\d, exit code 0:0; runs: {run.id} \(complete\)",
        done.stderr,
    ), done.stderr
    assert run.status == "complete"

    failed = cluster.slurm(
        *COMM_SMALL, "--sizes", "8,16,32,64", "--db", postgres_url, "--json",
        cwd=tmp_path, env={"BENCHDB_COMM_TEST_FAULT": "raise:1"}, timeout=600,
    )  # fmt: skip
    assert failed.returncode == 1, failed.stderr
    result = json.loads(failed.stdout)
    assert result["state"] == "FAILED" and result["exit_code"] != "0:0"
    assert [r["status"] for r in result["runs"]] == ["interrupted"]  # settled, not "running"
    assert any("InjectedFault" in line for line in result["output_tail"])


def test_a_rank_killed_outright_ends_the_job(two_nodes, postgres_url: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A rank that dies without MPI_Abort (SIGKILL: an OOM kill, a crash) ends the whole job,
    which ``--wait`` reports failed, its points kept.  srun alone waits for the other rank,
    which waits in MPI for the dead one: the job held both nodes, running, for good (and
    every later job pended behind it) until the step was started ``--kill-on-bad-exit``."""
    failed = cluster.slurm(
        *COMM_SMALL, "--db", postgres_url, "--json",
        cwd=tmp_path, env={"BENCHDB_COMM_TEST_FAULT": "kill:1"}, timeout=300,
    )  # fmt: skip
    assert failed.returncode == 1, failed.stderr
    result = json.loads(failed.stdout)
    assert result["state"] == "FAILED", result
    assert any("task 1: Killed" in line for line in result["output_tail"]), result
    # settled, not "running": rank 0 ended in Python (SIGTERM) or in MPI (SIGKILL)
    assert [r["status"] for r in result["runs"]] in (["interrupted"], ["failed"])
    assert len(_comm_points(postgres_url)) in (1, 2)  # the points before the kill kept


def test_a_programs_whole_run_spans_the_nodes(  # type: ignore[no-untyped-def]
    two_nodes, mpi_example: Path, postgres_url: str, tmp_path
) -> None:
    """`slurm app --program`: `app run` on the first node, whose launch line's mpiexec
    places the 2 ranks on the allocation's 2 nodes; the run is stored with its job."""
    done = cluster.slurm(
        "app", "-N", "2", "--db", postgres_url, "--program", str(mpi_example / "benchdb.toml"),
        "--grid", "64x32", "--decomp", "2x1", "--steps", "5", "--tag", "two-nodes",
        "--wait", "--json", cwd=tmp_path, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["state"] == "COMPLETED", result["output_tail"]
    run = _run(postgres_url)
    assert [r["status"] for r in result["runs"]] == ["complete"] and result["runs"][0][
        "id"
    ] == run.id
    assert run.kind == "app" and run.tags == ["two-nodes"]
    assert run.config["slurm_job"] == str(result["job_id"])
    db = open_database(postgres_url)
    with db.session() as s:
        (app_run,) = s.scalars(select(AppRun)).all()
        assert (app_run.application, app_run.ranks, app_run.grid) == ("shallowmpi", 2, [64, 32])
        assert len(app_run.rank_seconds) == 2 and app_run.total_seconds > 0
    db.close()
