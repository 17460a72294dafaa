"""The scheduler seam (benchdb.scheduler): the job a run records, whether that job has
ended, the node's name; Slurm's implementation, a second scheduler plugged in beside it,
and no module outside the Slurm implementation importing it."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from benchdb import scheduler
from benchdb.slurm import jobs
from tests.imports import ROOT, file_imports


def test_a_run_records_the_slurm_job_it_runs_in(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(jobs.JOB_VAR, "42")
    monkeypatch.setenv(jobs.NODE_VAR, "n2")
    assert scheduler.with_current_job({"a": 1, "slurm_job": "7"}) == {"a": 1, "slurm_job": "42"}
    assert scheduler.node_name() == scheduler.scheduled_node_name() == "n2"
    assert not scheduler.job_ended({"slurm_job": "42"})  # its own job is live
    monkeypatch.delenv(jobs.JOB_VAR)
    monkeypatch.delenv(jobs.NODE_VAR)
    # continued outside any job: the ended job's id goes, or the run would look stale
    assert scheduler.with_current_job({"a": 1, "slurm_job": "7"}) == {"a": 1}
    assert scheduler.scheduled_node_name() is None
    assert not scheduler.job_ended({"a": 1})  # no job named: nothing to conclude


@dataclass
class Pbs:
    """A second scheduler as a site would add one: its job id, its ended jobs, its nodes."""

    ended: set[str] = field(default_factory=set)
    name: str = "pbs"
    config_key: str = "pbs_job"
    job: str | None = None
    node: str | None = None

    def current_job(self) -> str | None:
        return self.job

    def job_ended(self, job_id: str) -> bool:
        return job_id in self.ended

    def node_name(self) -> str | None:
        return self.node

    def allocation(self) -> tuple[int, int] | None:
        return (2, 4) if self.job else None


def test_a_second_scheduler_plugs_in_beside_slurm(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(jobs.JOB_VAR, raising=False)
    monkeypatch.delenv(jobs.NODE_VAR, raising=False)
    pbs = Pbs(ended={"9.server"}, job="10.server", node="cn17")
    monkeypatch.setattr(scheduler, "schedulers", lambda: (jobs.SCHEDULER, pbs))
    assert scheduler.with_current_job({"slurm_job": "3"}) == {"pbs_job": "10.server"}
    assert scheduler.node_name() == "cn17"
    assert scheduler.job_allocation() == (2, 4)
    assert scheduler.job_ended({"pbs_job": "9.server"})
    assert not scheduler.job_ended({"pbs_job": "10.server"})


def test_only_the_slurm_implementation_imports_it() -> None:
    """Slurm's implementation is benchdb/slurm/ and the `benchdb slurm` command; the core
    reaches it through benchdb.scheduler alone."""
    allowed = {"benchdb/cli/slurm_cmd.py", "benchdb/cli/slurm_wait.py"}
    offenders = []
    for folder in ("benchdb", "collectors", "kernels", "migrations"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            name = str(path.relative_to(ROOT))
            if name.startswith("benchdb/slurm/") or name in allowed:
                continue
            if any(
                m == "benchdb.slurm" or m.startswith("benchdb.slurm.") for m in file_imports(path)
            ):
                offenders.append(name)
    assert offenders == []
