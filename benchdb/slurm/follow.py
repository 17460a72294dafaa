"""Following a submitted job until it ends (``benchdb slurm ... --wait``).

Slurm is asked with ``scontrol show job``, which knows a job from submission until
``MinJobAge`` (300 s by default) after it ended, and needs no accounting database
(``sacct`` does, and many small clusters have none).  The job is polled every few
seconds at first and every :data:`MAX_INTERVAL_S` once it has run a while: a short
job's result comes quickly, and a long one costs the controller one query per
interval.  Which runs the job wrote is the database's to say: every run records
the Slurm job it ran in (:mod:`.jobs`), a continued one included.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..db.engine import Database
from ..db.runs import mark_stale_runs, runs_with_config
from .jobs import CONFIG_KEY, LIVE
from .submit import find_tool

FIRST_INTERVAL_S = 2.0
MAX_INTERVAL_S = 15.0
RUNNING_LINE_EVERY_S = 60.0  # while a job runs, a line this often says it still does
GONE = "UNKNOWN"  # scontrol no longer knows the job: "Invalid job id" (purged after MinJobAge)
UNANSWERED = "UNANSWERED"  # scontrol failed otherwise (controller busy, down, restarting)
# still ending (its exit code is not final yet), or not known to have ended: a controller
# that did not answer this once says nothing of the job, which goes on
NOT_ENDED = LIVE | {"COMPLETING", UNANSWERED}


@dataclass(frozen=True)
class JobState:
    """One look at a job: its state, why it waits, where it runs, how it ended."""

    job_id: int
    state: str  # PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT, ...
    reason: str = "None"  # why it pends or ended (Resources, NonZeroExitCode, ...)
    nodes: str = ""  # the node list once it runs
    run_time: str = ""  # HH:MM:SS
    exit_code: str = ""  # status:signal, e.g. 0:0 or 1:0

    @property
    def ended(self) -> bool:
        return self.state not in NOT_ENDED

    @property
    def succeeded(self) -> bool:
        return self.state == "COMPLETED" and self.exit_code in ("", "0:0")

    def line(self) -> str:
        """The state as a progress line."""
        if self.state == UNANSWERED:
            return f"job {self.job_id}: scontrol did not answer ({self.reason}); asking again"
        text = f"job {self.job_id} {self.state.lower()}"
        if self.state == "PENDING" and self.reason != "None":
            return f"{text} ({self.reason})"
        if self.state == "RUNNING":
            return f"{text} on {self.nodes} for {self.run_time}"
        return text

    def where(self) -> str:
        """Where and how long it ran (`` on n[1-2] after 00:00:04``), '' where it never ran:
        said in the result, since a short job can start and end between two polls."""
        if not self.nodes or self.nodes == "(null)":
            return ""
        return f" on {self.nodes}" + (f" after {self.run_time}" if self.run_time else "")


def job_state(job_id: int) -> JobState:
    """What ``scontrol`` says of job ``job_id`` now: state :data:`GONE` where it no longer
    knows the job, :data:`UNANSWERED` (the error as the reason) where it failed otherwise.

    Only "Invalid job id" means the job is gone.  A busy controller's "Socket timed out",
    or one restarting, is no news of the job, which goes on: taken for its end, it made
    ``--wait`` stop following a running job and report it ended, state UNKNOWN."""
    try:
        proc = subprocess.run(
            [find_tool("scontrol"), "show", "job", "-o", str(job_id)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except subprocess.TimeoutExpired:
        return JobState(job_id, UNANSWERED, "no answer within 60 s")
    fields = dict(f.split("=", 1) for f in proc.stdout.split() if "=" in f)
    if proc.returncode != 0 or "JobState" not in fields:
        if "invalid job id" in proc.stderr.lower():
            return JobState(job_id, GONE)
        error = " ".join(proc.stderr.split()) or f"exit code {proc.returncode}"
        return JobState(job_id, UNANSWERED, error)
    return JobState(
        job_id,
        fields["JobState"],
        fields.get("Reason", "None"),
        fields.get("NodeList", ""),
        fields.get("RunTime", ""),
        fields.get("ExitCode", ""),
    )


def follow(job_id: int, report: Callable[[JobState], None]) -> JobState:
    """Poll job ``job_id`` until it has ended; its last state.  ``report`` gets every new
    state, and a running job's state every :data:`RUNNING_LINE_EVERY_S`."""
    interval = FIRST_INTERVAL_S
    last: JobState | None = None
    reported_at = 0.0
    while True:
        now = job_state(job_id)
        if now.ended:
            return now
        due = time.monotonic() - reported_at >= RUNNING_LINE_EVERY_S
        if last is None or now.state != last.state or due:
            report(now)
            reported_at = time.monotonic()
        last = now
        time.sleep(interval)
        interval = min(interval * 1.5, MAX_INTERVAL_S)


def runs_of_job(db: Database, job_id: int) -> list[tuple[int, str]]:
    """(id, status) of every run that the ended job ``job_id`` created or continued.

    A rank killed inside MPI leaves its run ``running``; the job has ended, so such a
    run is settled ``interrupted`` first (:func:`~benchdb.db.runs.mark_stale_runs`), as the
    next collector would, rather than reported as running.
    """
    mark_stale_runs(db)
    return runs_with_config(db, CONFIG_KEY, str(job_id))


def output_tail(path: str, lines: int = 20) -> list[str]:
    """The last ``lines`` lines of the job's output file (none where it is unreadable)."""
    try:
        return Path(path).read_text(errors="replace").splitlines()[-lines:]
    except OSError:
        return []
