"""The lines ``--wait`` prints from one look at a job (``scontrol show job``).  No cluster:
the job states are built as scontrol reports them."""

from __future__ import annotations

import pytest

from benchdb.slurm.follow import JobState


@pytest.mark.parametrize(
    ("state", "line", "where"),
    [
        (JobState(7, "PENDING", "Resources"), "job 7 pending (Resources)", ""),
        (JobState(7, "PENDING"), "job 7 pending", ""),
        (JobState(7, "RUNNING", nodes="n[1-2]", run_time="00:00:01"),
         "job 7 running on n[1-2] for 00:00:01", " on n[1-2] after 00:00:01"),
        (JobState(7, "COMPLETED", nodes="n1", run_time="00:00:04", exit_code="0:0"),
         "job 7 completed", " on n1 after 00:00:04"),
        (JobState(7, "CANCELLED", nodes="(null)", exit_code="0:0"), "job 7 cancelled", ""),
    ],
)  # fmt: skip
def test_a_jobs_line_and_where_it_ran(state: JobState, line: str, where: str) -> None:
    """A job cancelled while pending never ran: scontrol says NodeList=(null), and the
    result says nothing of where."""
    assert state.line() == line
    assert state.where() == where
