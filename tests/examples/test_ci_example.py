"""examples/ci/compare-change.sh, the steps of the example workflow, run as CI runs them.

Two checkouts (here: two folders, nothing to install) are collected into one database
with a small sweep of a built-in kernel, then compared from the change's folder, whose
benchdb.toml must set the threshold.  The workflow file itself is GitHub's to run; its
steps call only this script, ``gh`` and shell.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from .conftest import EXAMPLES

SCRIPT = EXAMPLES / "ci" / "compare-change.sh"


def run(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"  # benchdb
    return subprocess.run(
        ["bash", str(SCRIPT), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PATH": path, **env},
        timeout=600,
    )


def test_base_and_change_are_collected_compared_and_the_markdown_written(tmp_path: Path) -> None:
    base, change = tmp_path / "base", tmp_path / "change"
    base.mkdir()
    change.mkdir()
    (change / "benchdb.toml").write_text("[compare]\nthreshold = 50\n")
    url = f"sqlite:///{tmp_path / 'ci.sqlite'}"
    env = {
        "BENCHDB_URL": url,
        "BENCHDB_INSTALL": "",
        "BENCHDB_COLLECT": "--kernels stream.triad --sizes 2000,20000,200000 --samples 5",
    }
    proc = run("base", "change", "comment.md", env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    comment = (tmp_path / "comment.md").read_text()
    assert comment.startswith("### benchdb: no regression\n")
    assert "threshold 50%" in comment  # the change's benchdb.toml was read
    assert "(`base`" in comment and "(`change`" in comment
    assert proc.stdout == comment
    # the base was collected three times: the scatter between its runs was measured and charged
    assert "Run-to-run scatter of unchanged code" in comment
    assert "== base-replicate-1:" in proc.stderr


def test_a_bad_number_of_base_runs_is_one_line_exit_2_and_collects_nothing(
    tmp_path: Path,
) -> None:
    db = tmp_path / "ci.sqlite"
    env = {"BENCHDB_URL": f"sqlite:///{db}", "BENCHDB_INSTALL": "", "BENCHDB_BASE_RUNS": "two"}
    proc = run(str(tmp_path), str(tmp_path), env=env, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "BENCHDB_BASE_RUNS=two is not a number of runs; set it to 1 or more, e.g. 3"
    ]
    assert not db.exists()


def test_missing_arguments_are_exit_2(tmp_path: Path) -> None:
    proc = run(env={}, cwd=tmp_path)
    assert proc.returncode == 2 and "usage:" in proc.stderr
