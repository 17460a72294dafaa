"""Which unfinished run a job continues, and which Slurm job the run then names (issue 31).

* a comm run is continued by a job of the same plan on any host of its node class (a
  resubmitted job's rank 0 may land on another node), never by one of another class;
  a kernel collection still continues its own host's runs only;
* a claimed run names the claimer's Slurm job (else another host takes it for stale, as
  its recorded job has ended, and marks it ``interrupted`` while it runs), and a run
  continued outside Slurm names none.

Real databases (SQLite file, and the PostgreSQL of ``postgres_url``), no cluster needed:
the job a process runs in is what Slurm sets in its environment, ``SLURM_JOB_ID``.
"""

from __future__ import annotations

import dataclasses

import pytest
from benchdb.collectors.mpi.results import RUN_KIND as COMM

from benchdb.db import resume
from benchdb.db.engine import Database
from benchdb.db.models import Run
from benchdb.db.repo import register_environment, register_machine
from benchdb.db.runs import this_process_run
from benchdb.environment import detect_environment
from benchdb.machine import MachineInfo, detect_machine
from benchdb.slurm.jobs import CONFIG_KEY, JOB_VAR

PLAN = "plan-hash-1"


def _host(name: str, **changes: object) -> MachineInfo:
    return dataclasses.replace(detect_machine(), hostname=name, **changes)


def _run_on(db: Database, machine: MachineInfo, kind: str, status: str = "interrupted") -> int:
    with db.session() as s:
        run = this_process_run(
            s, kind=kind, status="running", config={"sweep_hash": PLAN}, machine=machine
        )
        run.status = status
        return run.id


def _ids(db: Database, machine: MachineInfo) -> tuple[int, int]:
    with db.session() as s:
        return register_machine(s, machine).id, register_environment(s, detect_environment()).id


def _find(db: Database, on: MachineInfo, kind: str, node_class: bool) -> int | None:
    machine_id, environment_id = _ids(db, on)
    return resume.find_resumable(
        db,
        machine_id,
        environment_id,
        PLAN,
        kind=kind,
        statuses=resume.RESUMABLE,
        node_class=node_class,
    )


def test_a_comm_run_is_continued_from_another_host_of_its_node_class(db: Database) -> None:
    run = _run_on(db, _host("n1"), COMM)
    assert _find(db, _host("n2"), COMM, node_class=True) == run
    other_class = _host("n3", cpu_model="Other CPU 9000")
    assert _find(db, other_class, COMM, node_class=True) is None


def test_a_kernel_collection_continues_its_own_host_only(db: Database) -> None:
    run = _run_on(db, _host("n1"), resume.RUN_KIND)
    assert _find(db, _host("n2"), resume.RUN_KIND, node_class=False) is None
    assert _find(db, _host("n1"), resume.RUN_KIND, node_class=False) == run


def _job_of(db: Database, run_id: int) -> str | None:
    with db.session() as s:
        return s.get_one(Run, run_id).config.get(CONFIG_KEY)


def test_a_claimed_run_names_the_claimers_job(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(JOB_VAR, "101")
    run = _run_on(db, _host("n1"), COMM)
    assert _job_of(db, run) == "101"
    monkeypatch.setenv(JOB_VAR, "102")  # the job submitted again
    assert resume.claim(db, run)
    assert _job_of(db, run) == "102"
    with db.session() as s:
        assert s.get_one(Run, run).config["sweep_hash"] == PLAN  # the rest of it kept
        s.get_one(Run, run).status = "interrupted"
    monkeypatch.delenv(JOB_VAR)  # continued by hand, outside Slurm: no job to look up
    assert resume.claim(db, run)
    assert _job_of(db, run) is None
    assert not resume.claim(db, run)  # running now: nobody else gets it
