"""``benchdb slurm collect|comm --wait``: follow the submitted job, then say how it ended.

The result is the job's state and exit code, the runs it wrote (each run records the
job it ran in), and on failure the end of its output file, where the nodes' own
error lines are: the one place a user learns why without a second command.  The exit
status is the job's: 0 when it completed, 1 when not.  Ctrl-C stops the following,
not the job, and says how to follow it on.
"""

from __future__ import annotations

from typing import Any

import typer

from ..db.urls import redact
from ..slurm.follow import JobState, follow, output_tail, runs_of_job
from .common import err_console, open_db, print_json


def _progress(state: JobState) -> None:
    err_console.print(state.line(), highlight=False, soft_wrap=True)


def wait_for(job_id: int, url: str, output: str, submitted: dict[str, Any], as_json: bool) -> None:
    """Follow job ``job_id`` to its end and print its result (``submitted`` with it, as
    JSON); typer.Exit(1) when it did not complete."""
    try:
        final = follow(job_id, (lambda _state: None) if as_json else _progress)
    except KeyboardInterrupt:
        err_console.print(
            f"stopped following job {job_id}, which goes on: `squeue -j {job_id}` shows it, "
            f"`scancel {job_id}` ends it",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(130) from None
    database = open_db(url)
    try:
        runs = runs_of_job(database, job_id)
    finally:
        database.close()
    tail = [] if final.succeeded else output_tail(output)
    if as_json:
        print_json(
            {
                **submitted,
                "state": final.state,
                "exit_code": final.exit_code,
                "runs": [{"id": run_id, "status": status} for run_id, status in runs],
                "output_tail": tail,
            }
        )
    else:
        wrote = ", ".join(f"{run_id} ({status})" for run_id, status in runs) or "none"
        err_console.print(
            f"job {job_id} {final.state}{final.where()}, exit code {final.exit_code or 'unknown'}; "
            f"runs: {wrote} in {redact(url)}",
            highlight=False,
            soft_wrap=True,
        )
        if tail:
            err_console.print(
                f"the end of {output}:\n" + "\n".join(tail),
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
    if not final.succeeded:
        raise typer.Exit(1)
