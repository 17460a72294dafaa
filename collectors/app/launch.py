"""Starting a Python module on P ranks with ``mpiexec`` (the MPICH wheel's, next to Python).

Ranks are bound one per core (hydra's ``-bind-to core``) when the machine has
a core for each, so that a rank's loop times do not depend on where the
scheduler moves it; the worker reports the CPUs it ran on.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from benchdb.errors import UserError


def mpiexec_path() -> str:
    """``mpiexec`` beside this Python (a virtualenv's), else on PATH; UserError if none."""
    beside = Path(sys.executable).with_name("mpiexec")
    if beside.exists():
        return str(beside)
    found = shutil.which("mpiexec")
    if found is None:
        raise UserError(
            "mpiexec not found; install MPI for this Python (pip install mpi4py mpich) "
            "or put an mpiexec on PATH"
        )
    return found


def mpi_command(ranks: int, module: str, args: list[str], *, bind: bool) -> list[str]:
    cmd = [mpiexec_path(), "-n", str(ranks)]
    if bind:
        cmd += ["-bind-to", "core"]
    return [*cmd, sys.executable, "-m", module, *args]


def run_mpi(
    ranks: int, module: str, args: list[str], *, timeout: float | None = None
) -> subprocess.CompletedProcess:
    """Run ``python -m module args`` on ``ranks`` ranks; stdout/stderr captured."""
    bind = ranks <= (os.cpu_count() or 1)
    env = {**os.environ, "NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    try:
        return subprocess.run(
            mpi_command(ranks, module, args, bind=bind),
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise UserError(
            f"the MPI job did not finish within {timeout:.0f} s and was stopped; "
            "nothing was written (use fewer --steps or a longer --timeout)"
        ) from exc


def failure_message(proc: subprocess.CompletedProcess) -> str:
    """The ranks' one-line errors (or the tail of stderr) of a failed job, on one line."""
    lines = [ln.strip() for ln in (proc.stderr or "").splitlines() if ln.strip()]
    mine = [ln for ln in lines if ln.startswith("rank ")]
    detail = "; ".join(mine or lines[-2:]) or f"exit status {proc.returncode}"
    return detail
