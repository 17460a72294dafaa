"""Slurm as the scheduler a process runs under (:class:`benchdb.scheduler.Scheduler`).

A run recorded inside a Slurm job keeps the job's id (``config["slurm_job"]``).
When a job is cancelled, a rank blocked inside MPI cannot run its SIGTERM
handler and is killed, so its run stays ``running``; the next job may start on
other nodes, where the process id says nothing.  The job id does: once
``squeue`` no longer lists the job as live, the run is stale and may be
continued (:func:`benchdb.db.runs.is_stale`).  The node's name is Slurm's
(``SLURMD_NODENAME``): two nodes emulated on one computer share a hostname.
"""

from __future__ import annotations

import os
import shutil
import subprocess

JOB_VAR = "SLURM_JOB_ID"
NODE_VAR = "SLURMD_NODENAME"
CONFIG_KEY = "slurm_job"
LIVE = frozenset({"PENDING", "CONFIGURING", "RUNNING", "SUSPENDED", "REQUEUED", "RESIZING"})


def job_ended(job_id: str) -> bool:
    """True when Slurm says job ``job_id`` is no longer live; False when it is, or when
    there is no ``squeue`` to ask (then nothing can be concluded)."""
    squeue = shutil.which("squeue")
    if squeue is None or job_id == os.environ.get(JOB_VAR):
        return False
    try:
        proc = subprocess.run(
            [squeue, "-h", "-j", job_id, "-t", "all", "-o", "%T"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    if proc.returncode != 0:  # purged from the controller: "Invalid job id specified"
        return "invalid job id" in proc.stderr.lower()
    states = set(proc.stdout.split())
    return not states & LIVE


class Slurm:
    """:class:`benchdb.scheduler.Scheduler` for Slurm."""

    name = "slurm"
    config_key = CONFIG_KEY

    def current_job(self) -> str | None:
        return os.environ.get(JOB_VAR) or None

    def job_ended(self, job_id: str) -> bool:
        return job_ended(job_id)

    def node_name(self) -> str | None:
        return os.environ.get(NODE_VAR) or None

    def allocation(self) -> tuple[int, int] | None:
        nodes = os.environ.get("SLURM_JOB_NUM_NODES", "")
        per_node = os.environ.get("SLURM_NTASKS_PER_NODE", "")  # set by --ntasks-per-node
        if self.current_job() is None or not (nodes.isdigit() and per_node.isdigit()):
            return None
        return int(nodes), int(per_node)


SCHEDULER = Slurm()
