"""When a ``running`` run is stale: its process is gone -- exited, or a zombie nobody has
reaped yet (an MPI rank whose launcher ended first) -- or its Slurm job has ended."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

from benchdb.db.models import Run
from benchdb.db.runs import is_stale


def _run(pid: int, **config: str) -> Run:
    return Run(status="running", hostname=socket.gethostname(), pid=pid, config=dict(config))


def test_a_live_process_is_not_stale() -> None:
    assert not is_stale(_run(os.getpid()))


def test_a_zombie_is_stale() -> None:
    child = subprocess.Popen(["true"])
    stat = Path(f"/proc/{child.pid}/stat")
    for _ in range(200):  # until it has exited, unreaped
        if stat.read_text().rpartition(")")[2].split()[0] == "Z":
            break
        time.sleep(0.01)
    try:
        assert is_stale(_run(child.pid))
    finally:
        child.wait()
    assert is_stale(_run(child.pid))  # reaped: gone


def test_another_hosts_run_is_stale_only_when_its_slurm_job_is_known_to_have_ended() -> None:
    elsewhere = Run(status="running", hostname="another-node", pid=os.getpid(), config={})
    assert not is_stale(elsewhere)  # nothing to go by
