"""``benchdb ab`` end to end: real worker processes, real kernels at tiny sizes.

Verdicts are asserted only for slowdowns far beyond any noise of a shared host
(``NUMBA_OPT=0``, a plugin variant doing 3x the work); unchanged code is asserted not
to crash.  No wall-clock thresholds.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from benchdb.db.engine import open_database
from benchdb.db.models import Run
from benchdb.db.runs import ab_pair, stored_runs
from tests.clihelpers import assert_user_error, benchdb, benchdb_command

INJECT = Path(__file__).parents[2] / "benchmarks" / "ab" / "inject.py"
pytestmark = pytest.mark.slow  # real worker processes: the lowest-versions run skips them

TINY = ["--sample-time", "0.001", "--pairs", "5", "--trials", "2", "--json"]


def _variant(folder: Path, work: float) -> Path:
    """The injected-work plugin doing ``work`` times the work (same kernel names)."""
    folder.mkdir()
    path = folder / "inject.py"
    path.write_text(INJECT.read_text().replace("\nWORK = 1.0\n", f"\nWORK = {work}\n", 1))
    return path


def _runs(url: str) -> list[dict]:
    db = open_database(url)
    try:
        return stored_runs(db)
    finally:
        db.close()


def _verdicts(stdout: str) -> dict[str, str]:
    return {k["kernel"]: k["verdict"] for k in json.loads(stdout)["judgement"]["kernels"]}


def test_numba_opt0_is_slower_and_the_pair_is_stored(sqlite_url: str) -> None:
    proc = benchdb(
        "ab", "--kernels", "stream.triad", "--sizes", "2000", "--change-env", "NUMBA_OPT=0",
        "--tag", "t1", *TINY, "--db", sqlite_url,
    )  # fmt: skip
    if proc.returncode == 0 and _verdicts(proc.stdout) == {"stream.triad": "disturbed"}:
        pytest.skip("the host disturbed the pair's samples: the operating system's evidence "
                    "says a neighbour, not the code, decided them")  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert _verdicts(proc.stdout) == {"stream.triad": "slower"}
    runs = json.loads(proc.stdout)["run"]["runs"]
    db = open_database(sqlite_url)
    assert ab_pair(db, runs["base"]) == runs == ab_pair(db, runs["change"])
    listed = {r["id"]: r for r in stored_runs(db)}
    assert set(listed[runs["change"]]["tags"]) == {"t1", "ab", "ab:change"}
    assert listed[runs["base"]]["status"] == listed[runs["change"]]["status"] == "complete"
    assert listed[runs["base"]]["environment_id"] != listed[runs["change"]]["environment_id"]
    # the pair is two ordinary runs: compare judges them too
    compared = benchdb("compare", str(runs["base"]), str(runs["change"]), "--db", sqlite_url)
    assert compared.returncode == 1, compared.stderr
    assert "stream.triad" in compared.stdout


def test_the_shallow_model_is_compared_on_two_pairs_of_workers(sqlite_url: str) -> None:
    proc = benchdb("ab", "--kernels", "shallow", "--sizes", "24x24", *TINY, "--db", sqlite_url)
    assert proc.returncode in (0, 1), proc.stderr
    assert "shallow.cu" in _verdicts(proc.stdout)
    db = open_database(sqlite_url)
    with db.reading() as s:
        configs = [s.get_one(Run, r["id"]).config["ab"] for r in stored_runs(db)]
    assert [c["processes"] for c in configs] == [2, 2]  # one pair per trial


def test_plugin_variant_doing_3x_the_work_is_slower(sqlite_url: str, tmp_path: Path) -> None:
    change = _variant(tmp_path / "change", 3.0)
    proc = benchdb(
        "ab", "--base-plugin", str(INJECT), "--change-plugin", str(change),
        "--kernels", "inject.triad", "--sizes", "4000", "--sample-time", "0.001", "--pairs", "5",
        "--trials", "2", "--markdown", "--db", sqlite_url,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert "kernel(s) slower" in proc.stdout
    assert "| inject.triad | float64 1t | 1 |" in proc.stdout and "**slower**" in proc.stdout


def test_same_code_runs_and_a_killed_run_continues(sqlite_url: str) -> None:
    sizes = ["1000", "2000", "4000", "8000", "16000", "32000", "64000", "128000"]
    args = [
        "ab", "--kernels", "stream.triad", "--sizes", ",".join(sizes),
        "--sample-time", "0.001", "--pairs", "5", "--trials", "2", "--quiet", "--db", sqlite_url,
    ]  # fmt: skip  # enough points that the kill lands mid-run on a fast, quiet host
    proc = subprocess.Popen(benchdb_command(*args), start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if os.path.exists(sqlite_url.removeprefix("sqlite:///")) and any(
            r["measurements"] >= 1 for r in _runs(sqlite_url)
        ):
            break
        time.sleep(0.2)
    assert proc.poll() is None, "the run ended before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)  # the coordinator and its workers, at once
    proc.wait(30)
    killed = {r["id"]: r["measurements"] for r in _runs(sqlite_url)}
    assert len(killed) == 2 and len(set(killed.values())) == 1  # committed together
    assert {r["status"] for r in _runs(sqlite_url)} == {"running"}  # killed, not ended
    again = benchdb(*args[:-3], "--json", "--db", sqlite_url)
    assert again.returncode in (0, 1), again.stderr
    result = json.loads(again.stdout)
    assert result["run"]["resumed"] and set(result["run"]["runs"].values()) == set(killed)
    assert result["run"]["already_stored"] >= 1
    runs = _runs(sqlite_url)
    assert [r["measurements"] for r in runs] == [len(sizes)] * 2 and {
        r["status"] for r in runs
    } == {"complete"}
    assert {k["kernel"] for k in result["judgement"]["kernels"]} == {"stream.triad"}


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--change-env", "NUMBA_OPT"], "NAME=VALUE"),
        (["--order", "sideways"], "--order"),
        (["--change-python", "/no/such/python"], "no such Python"),
        (["--kernels", "nosuchkernel"], "unknown kernel"),
        (["--pairs", "2"], "--pairs"),
        (["--threshold", "0"], "--threshold"),
        (["--json", "--markdown"], "--json or --markdown"),
        (["--trials", "2", "--processes", "3"], "--processes 3 is more than --trials 2"),
    ],
)
def test_bad_input_exits_2_and_creates_nothing(
    tmp_path: Path, args: list[str], needle: str
) -> None:
    path = tmp_path / "sub" / "ab.sqlite"
    proc = benchdb("ab", "--sizes", "1000", *args, "--db", f"sqlite:///{path}")
    assert_user_error(proc, needle)
    assert not path.parent.exists()


def test_duet_on_one_cpu_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "ab.sqlite"
    proc = subprocess.run(
        benchdb_command("ab", "--order", "duet", "--sizes", "1000", "--db", f"sqlite:///{path}"),
        capture_output=True,
        text=True,
        preexec_fn=lambda: os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}),
        timeout=120,
    )
    assert_user_error(proc, "duet needs 2 CPUs")
    assert not path.exists()
