"""Start the benchmark job under ``mpiexec`` and report how it ended.

``mpiexec`` is looked for, in order: the ``--mpiexec`` argument or
``$BENCHDB_MPIEXEC``, the one beside this Python (the mpich wheel installs it
in the virtual environment's ``bin``), then ``PATH``.  With MPICH's Hydra
launcher the ranks are pinned one per core (``-bind-to core``) unless there
are more ranks than CPUs, so that placement is known and timings are stable.

If any rank fails, Hydra ends the whole job; this module turns mpiexec's exit
code and the failing rank's one-line ``benchdb-comm-error`` (or Hydra's
"killed by signal" report) into one :class:`UserError`.  The points measured
before the failure are stored (:mod:`.results` commits each one); the same
command continues the run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchdb.errors import UserError

from .job_output import ERROR, PROGRESS, RESULT

ENV = "BENCHDB_MPIEXEC"


def find_mpiexec(explicit: str | None = None) -> str:
    """The mpiexec to use; UserError with the fix when there is none."""
    wanted = explicit or os.environ.get(ENV)
    if wanted:
        found = shutil.which(wanted)
        if not found:
            raise UserError(f"mpiexec {wanted!r} not found or not executable; fix --mpiexec/{ENV}")
        return found
    beside = Path(sys.executable).parent / "mpiexec"
    if beside.exists() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("mpiexec")
    if not found:
        raise UserError(
            "no mpiexec found; `pip install mpich` puts one beside this Python, "
            f"or name yours with --mpiexec PATH or {ENV}"
        )
    return found


def is_hydra(mpiexec: str) -> bool:
    """MPICH's Hydra (the mpich wheel's launcher) ships mpiexec.hydra beside mpiexec."""
    path = Path(mpiexec)
    return path.name == "mpiexec.hydra" or (path.parent / "mpiexec.hydra").exists()


def command(
    mpiexec: str,
    ranks: int,
    module_args: Sequence[str],
    *,
    bind: bool = True,
    extra: Sequence[str] = (),
) -> list[str]:
    pin = (
        ["-bind-to", "core"]
        if bind and is_hydra(mpiexec) and ranks <= (os.cpu_count() or 1)
        else []
    )
    return [
        mpiexec, "-n", str(ranks), *pin, *extra,
        sys.executable, "-m", "benchdb.collectors.mpi", *module_args,
    ]  # fmt: skip


_KILLED = re.compile(r"EXIT STRING:\s*(.+?)\s*$|EXIT CODE:\s*(\d+)")


def failure_message(returncode: int, stderr: Sequence[str]) -> str:
    """One line: mpiexec's exit code and the first rank's reason."""
    reason = next((ln.split(":", 1)[1].strip() for ln in stderr if ln.startswith(ERROR)), None)
    if reason is None:
        for line in stderr:
            m = _KILLED.search(line)
            if m and m.group(1):
                reason = f"a rank ended abnormally ({m.group(1)})"
                break
            if m and m.group(2) and reason is None:
                reason = f"a rank exited with code {m.group(2)}"
    if reason is None:
        tail = [ln.strip() for ln in stderr if ln.strip()]
        reason = tail[-1] if tail else "no message"
    return (
        f"MPI job failed (mpiexec exit code {returncode}): {reason}; the points measured "
        "so far are stored and the same command continues the run"
    )


@dataclass
class JobResult:
    summary: dict[str, Any]
    stderr: list[str]


def run_job(
    cmd: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    on_progress: Callable[[dict[str, Any]], None] | None = None,
    timeout: float | None = None,
) -> JobResult:
    """Run the job (in ``env``, default this process's environment); its rank 0's result
    line, or UserError if it failed."""
    proc = subprocess.Popen(
        list(cmd),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # one process group: mpiexec and its ranks
    )
    stderr: list[str] = []
    reader = threading.Thread(target=lambda: stderr.extend(proc.stderr), daemon=True)
    reader.start()
    expired: list[bool] = []

    def _expire() -> None:
        expired.append(True)
        _kill_group(proc)

    timer = threading.Timer(timeout, _expire) if timeout else None
    if timer:
        timer.start()
    summary: dict[str, Any] | None = None
    other: list[str] = []  # Hydra prints its "BAD TERMINATION" report on stdout
    try:
        for line in proc.stdout:
            tag, _, payload = line.partition(" ")
            if tag == PROGRESS:
                if on_progress:
                    on_progress(json.loads(payload))
            elif tag == RESULT:
                summary = json.loads(payload)
            else:
                other.append(line)
        rc = proc.wait()
    except BaseException:
        _kill_group(proc)
        raise
    finally:
        if timer:
            timer.cancel()
        reader.join(timeout=5)
    if expired:
        raise UserError(
            f"MPI job exceeded --timeout {timeout:g} s and was stopped; the points measured "
            "so far are stored and the same command continues the run (raise --timeout, or "
            "use --quick)"
        )
    if rc != 0 or summary is None:
        raise UserError(failure_message(rc, [*stderr, *other]))
    return JobResult(summary, [*stderr, *other])


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
