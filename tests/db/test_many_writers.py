"""Many collectors writing one new database at once: no error, nothing lost, no duplicate row.

What the nodes of a new batch job do: each starts ``benchdb collect`` into the same
database the moment the job starts, so they race to create its schema, then to register
the same node class, environment and kernels (their hosts alternate between two Slurm
node names).  Real collector processes, tiny sweeps; on a fresh PostgreSQL schema and on a
fresh SQLite file (WAL mode).  Their start-up (compiling the kernels) spreads them by
seconds, so the schema race itself is pinned down by
``test_concurrency.test_four_processes_create_the_schema_at_once`` (a barrier in front of
the first open), which fails on PostgreSQL without the migration lock.

Then many more writers, started at one instant by a barrier: 16 on PostgreSQL and 8 on
an SQLite file, each its own Slurm node, each a collector's whole sweep (register, start
the run, commit each pass of each point, finish) through ``run_sweep`` with a synthetic
kernel (``benchmarks/many_writers.py``, which runs 64 and times them: figures in
docs/findings/many-writers.md).  Pass or fail only: no error, every point stored once
with all its passes, every run complete, one node class and one environment.
"""

from __future__ import annotations

import os
import subprocess

import pytest
from sqlalchemy import func, select, text

from benchdb.db.engine import open_database
from benchdb.db.models import SCHEMA_HEAD, Measurement, Run
from benchmarks.many_writers import Stored, Sweep, read_back, write_at_once
from tests.clihelpers import benchdb_command
from tests.collectors.dbcheck import counts

COLLECTORS = 4
FOOTPRINTS = ["16KiB", "64KiB"]
POINT = (Measurement.run_id, Measurement.kernel_id, Measurement.shape_key, Measurement.threads,
         Measurement.precision, Measurement.context)  # fmt: skip


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_collectors_started_at_once_on_a_new_database(
    backend: str, request: pytest.FixtureRequest
) -> None:
    url = request.getfixturevalue("sqlite_url" if backend == "sqlite" else "postgres_url")
    args = benchdb_command(
        "collect", "--kernels", "stream.triad", "--footprints", ",".join(FOOTPRINTS),
        "--sample-time", "0.002", "--passes", "1", "--quiet", "--db", url,
    )  # fmt: skip
    procs = [
        subprocess.Popen(
            args,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "SLURMD_NODENAME": f"node{i % 2}"},
        )
        for i in range(COLLECTORS)
    ]
    outcomes = [(p.wait(timeout=600), p.stderr.read() if p.stderr else "") for p in procs]
    for p in procs:
        if p.stdout:
            p.stdout.close()
        if p.stderr:
            p.stderr.close()
    assert [code for code, _ in outcomes] == [0] * COLLECTORS, [err for _, err in outcomes]
    assert not any("Traceback" in err for _, err in outcomes)

    found = counts(url)
    points = COLLECTORS * len(FOOTPRINTS)
    assert found == {"node_class": 1, "machine": 2, "environment": 1, "kernel": 1,
                     "run": COLLECTORS, "measurement": points}  # fmt: skip
    db = open_database(url)
    with db.reading() as s:
        assert s.scalars(text("SELECT version_num FROM alembic_version")).all() == [SCHEMA_HEAD]
        repeated = select(*POINT).group_by(*POINT).having(func.count() > 1)
        assert s.execute(repeated).all() == []
        assert set(s.scalars(select(Run.status))) == {"complete"}
    db.close()


AT_ONCE = {"sqlite": 8, "postgres": 16}
SWEEP = Sweep(points=4, passes=2)  # the first pass inserts a point's rows, the second updates


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_writers_started_at_one_instant_store_every_point_once(
    backend: str, request: pytest.FixtureRequest
) -> None:
    url = request.getfixturevalue("sqlite_url" if backend == "sqlite" else "postgres_url")
    open_database(url).close()  # the schema: its race is the test above's
    writers = AT_ONCE[backend]
    phase = write_at_once(url, writers, SWEEP, prefix="node")
    assert phase.errors == []
    assert len(phase.stores) == writers * SWEEP.points * SWEEP.passes
    assert read_back(url, phase.hosts, SWEEP) == Stored(
        runs=writers,
        complete=writers,
        expected=writers * SWEEP.points,
        stored=writers * SWEEP.points,
        lost=0,
        duplicated=0,
        wrong_passes=0,
        node_classes=1,
        environments=1,
    )
