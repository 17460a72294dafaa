"""benchmarks/regression_detection.py imports its harness (benchmarks/real_runs.py) as a
script does, from its own folder: no import of the tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "regression_detection.py"


def test_the_script_starts_from_any_folder(tmp_path) -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--help"], cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "--trials" in done.stdout
