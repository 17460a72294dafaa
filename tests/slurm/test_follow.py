"""The lines ``--wait`` prints from one look at a job (``scontrol show job``), and which of
scontrol's answers end the following.  No cluster: the job states are built as scontrol
reports them, and a stand-in ``scontrol`` gives its answers in turn."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from benchdb.slurm import follow
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


def _scontrol(folder: Path, answers: list[tuple[int, str, str]]) -> None:
    """A stand-in ``scontrol`` on PATH that gives ``answers`` (exit code, stdout, stderr)
    in turn, the last one again once they are used up."""
    folder.mkdir()
    (folder / "answers.json").write_text(json.dumps(answers))
    script = folder / "scontrol"
    script.write_text(
        f"#!{sys.executable}\n"
        "import json, pathlib, sys\n"
        f"folder = pathlib.Path({str(folder)!r})\n"
        "answers = json.loads((folder / 'answers.json').read_text())\n"
        "count = folder / 'count'\n"
        "n = int(count.read_text()) if count.exists() else 0\n"
        "count.write_text(str(n + 1))\n"
        "code, out, err = answers[min(n, len(answers) - 1)]\n"
        "sys.stdout.write(out)\n"
        "sys.stderr.write(err)\n"
        "sys.exit(code)\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


COMPLETED = "JobId=7 JobState=COMPLETED Reason=None NodeList=n[1-2] RunTime=00:00:04 ExitCode=0:0\n"
TIMED_OUT = "slurm_load_jobs error: Socket timed out on send/recv operation\n"


def test_a_controller_that_does_not_answer_once_is_asked_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A busy controller's error is no news of the job: following goes on to the job's end
    (it used to stop there, reporting the running job ended, state UNKNOWN)."""
    _scontrol(tmp_path / "bin", [(1, "", TIMED_OUT), (0, COMPLETED, "")])
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(follow, "FIRST_INTERVAL_S", 0.0)
    seen: list[str] = []
    final = follow.follow(7, lambda state: seen.append(state.line()))
    assert (final.state, final.exit_code, final.succeeded) == ("COMPLETED", "0:0", True)
    assert seen == [
        "job 7: scontrol did not answer (slurm_load_jobs error: Socket timed out on send/recv "
        "operation); asking again"
    ]


def test_a_job_scontrol_no_longer_knows_has_ended(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Purged MinJobAge after it ended: "Invalid job id", and following stops."""
    _scontrol(tmp_path / "bin", [(1, "", "slurm_load_jobs error: Invalid job id specified\n")])
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    final = follow.follow(7, lambda state: None)
    assert final.state == follow.GONE and final.ended and not final.succeeded
