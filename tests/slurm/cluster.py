"""A real Slurm cluster for the tests: found through ``sinfo``, or the test is skipped --
unless ``BENCHDB_REQUIRE_SLURM=1`` (CI, which starts scripts/slurm-local-cluster.sh), where
it fails.  Jobs are submitted through ``benchdb slurm`` and waited for with ``scontrol``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

from tests.clihelpers import run_benchdb
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
    """``benchdb slurm ARGS`` in ``cwd`` (where the job's output goes), ``env`` added.

    One that outlives ``timeout`` (``--wait`` on a job that never ends) fails the test with
    what it printed and what the cluster says of its jobs and nodes, taken before the
    test's teardown cancels the job: a bare "timed out" said nothing of why."""
    try:
        return run_benchdb(
            ["slurm", *args], cwd=cwd, timeout=timeout,
            env={**{k: v for k, v in os.environ.items() if k != "BENCHDB_URL"}, **(env or {})},
        )  # fmt: skip
    except subprocess.TimeoutExpired as exc:
        printed = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else ""
        raise AssertionError(
            f"`benchdb slurm {' '.join(args)}` did not end within {timeout:.0f} s; it printed:\n"
            f"{printed}\n{cluster_state()}"
        ) from None


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


def cluster_state() -> str:
    """The queue (each job's state, why it pends, where it runs), every node's state and
    why it is not up, and each queued job's output so far: for the message of a test whose
    job did not end."""
    parts = []
    for cmd in (["squeue", "-o", "%i %j %T %r %M %N"], ["sinfo", "-N", "-o", "%N %T %E"]):
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        parts.append(f"$ {' '.join(cmd)}\n{proc.stdout}{proc.stderr}")
    for job_id in queue():
        proc = subprocess.run(
            ["scontrol", "show", "job", "-o", job_id], capture_output=True, text=True, timeout=60
        )
        fields = dict(f.split("=", 1) for f in proc.stdout.split() if "=" in f)
        try:
            output = Path(fields.get("StdOut", "")).read_text(errors="replace")[-2000:]
        except OSError:
            output = "(none)"
        parts.append(f"job {job_id}: {proc.stdout.strip()}\noutput so far:\n{output}")
    return "\n".join(parts)


def cancel_jobs_left(before: list[str]) -> list[str]:
    """Cancel the jobs queued now that were not in ``before`` and wait until they have left
    the nodes; their ids.  A test that failed or timed out waiting leaves its job behind:
    with 1 CPU a node, a job left running holds both nodes, and every later test's job
    would pend behind it until that test timed out too."""
    left = [job_id for job_id in queue() if job_id not in before]
    if left:
        subprocess.run(["scancel", *left], check=False, timeout=60)
        for job_id in left:
            wait(int(job_id))
    return left


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
    state_now = cluster_state()
    subprocess.run(["scancel", str(job_id)], check=False)
    raise AssertionError(f"job {job_id} did not end within {HANG_GUARD_S} s\n{state_now}")
