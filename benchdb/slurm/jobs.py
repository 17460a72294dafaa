"""Which Slurm job a run belongs to, and whether that job has ended.

A run recorded inside a Slurm job keeps the job's id (``config["slurm_job"]``).
When a job is cancelled, a rank blocked inside MPI cannot run its SIGTERM
handler and is killed, so its run stays ``running``; the next job may start on
other nodes, where the process id says nothing.  The job id does: once
``squeue`` no longer lists the job as live, the run is stale and may be
continued (:func:`benchdb.runs.is_stale`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from typing import Any

JOB_VAR = "SLURM_JOB_ID"
CONFIG_KEY = "slurm_job"
LIVE = frozenset({"PENDING", "CONFIGURING", "RUNNING", "SUSPENDED", "REQUEUED", "RESIZING"})


def current_job() -> dict[str, str]:
    """``{"slurm_job": id}`` inside a Slurm job, else empty: merged into a run's config."""
    job = os.environ.get(JOB_VAR)
    return {CONFIG_KEY: job} if job else {}


def with_current_job(config: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` naming the job this process runs in, or none outside Slurm.

    For a run created here and for one continued here alike: a continued run that kept the
    job id of the job that ended would look stale to every other host (:func:`job_ended`),
    and a collector there would mark it ``interrupted`` while this process measures into it.
    """
    kept = {k: v for k, v in config.items() if k != CONFIG_KEY}
    return {**kept, **current_job()}


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
