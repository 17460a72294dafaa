"""A real Slurm cluster for the tests: found through ``sinfo``, or the test is skipped --
unless ``BENCHDB_REQUIRE_SLURM=1`` (CI, which starts scripts/slurm-local-cluster.sh), where
it fails.  Jobs are submitted through ``benchdb slurm`` and waited for with ``scontrol``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from tests.needs import missing

SWITCH = "BENCHDB_REQUIRE_SLURM"
FINAL = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED"}
HANG_GUARD_S = 600  # a job that never ends is a broken cluster, not a slow machine


def require_nodes(count: int) -> None:
    """Skip (or, with the switch, fail) unless ``count`` nodes are up."""
    if shutil.which("sinfo") is None or shutil.which("sbatch") is None:
        missing("no Slurm here (sinfo/sbatch not on PATH)", SWITCH)
    proc = subprocess.run(
        ["sinfo", "-h", "-N", "-t", "idle,mixed,allocated", "-o", "%N"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    nodes = set(proc.stdout.split())
    if proc.returncode != 0 or len(nodes) < count:
        missing(f"Slurm has {len(nodes)} usable node(s), the test needs {count}", SWITCH)


def slurm(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``benchdb slurm ARGS`` in ``cwd`` (where the job's output goes), ``env`` added."""
    return subprocess.run(
        [sys.executable, "-m", "benchdb", "slurm", *args],
        capture_output=True, text=True, cwd=cwd, timeout=timeout,
        env={**{k: v for k, v in os.environ.items() if k != "BENCHDB_URL"}, **(env or {})},
    )  # fmt: skip


def submit(*args: str, cwd: Path, env: dict[str, str] | None = None) -> dict:
    """``benchdb slurm ARGS --json`` in ``cwd``: the job id, script and output file."""
    proc = slurm(*args, "--json", cwd=cwd, env=env)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert isinstance(out["job_id"], int)
    return out


def queue() -> list[str]:
    """The ids of the jobs Slurm holds now."""
    proc = subprocess.run(["squeue", "-h", "-o", "%i"], capture_output=True, text=True, timeout=60)
    return proc.stdout.split()


def rank_0_on(node: str, nodes: list[str], folder: Path) -> dict[str, str]:
    """The environment that starts a job's ranks in the order of ``nodes``, ``node`` first
    (srun's arbitrary distribution, exported to the job by sbatch): rank 0 on ``node``."""
    hostfile = folder / "hostfile"
    hostfile.write_text("".join(f"{n}\n" for n in [node, *(n for n in nodes if n != node)]))
    return {"SLURM_HOSTFILE": str(hostfile), "SLURM_DISTRIBUTION": "arbitrary"}


MPI_INIT_FAILED = "Fatal error in internal_Init_thread"


def mpi_start_failed(output: str) -> bool:
    """Whether a job's output says MPI_Init failed on its ranks, before any benchdb code
    ran.  Seen on the emulated cluster: the MPICH wheel's UCX address, put through
    Slurm's pmi2 plugin, arrived cut ("mpi/pmi2: value not properly terminated in client
    request"), and both ranks aborted in MPI_Init (the cause is not found).  A start
    like that is the cluster's, and a test that needs a running job submits it again."""
    return MPI_INIT_FAILED in output


def batch_script(job_id: int) -> str:
    """The script as slurmctld keeps it (``scontrol write batch_script``)."""
    proc = subprocess.run(
        ["scontrol", "write", "batch_script", str(job_id), "-"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def state(job_id: int) -> str:
    proc = subprocess.run(
        ["scontrol", "show", "job", "-o", str(job_id)], capture_output=True, text=True, timeout=60
    )
    fields = dict(f.split("=", 1) for f in proc.stdout.split() if "=" in f)
    return fields.get("JobState", "UNKNOWN")


def wait(job_id: int) -> str:
    """The job's final state."""
    deadline = time.monotonic() + HANG_GUARD_S
    while time.monotonic() < deadline:
        s = state(job_id)
        if s in FINAL:
            return s
        time.sleep(1)
    subprocess.run(["scancel", str(job_id)], check=False)
    raise AssertionError(f"job {job_id} did not end within {HANG_GUARD_S} s")
