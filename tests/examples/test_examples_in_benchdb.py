"""The shipped examples through benchdb itself, as the README runs them: swept and predicted.

CI installs gfortran (.ci/run), so there the Fortran example is never skipped.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.clihelpers import benchdb


def test_the_fortran_example_is_swept_and_answers_predict(binary: Path, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'fortran.sqlite'}"
    spec = binary.parent / "benchdb.toml"
    proc = benchdb("collect", "--program", str(spec), "--quick", "--db", url, "--json")
    assert proc.returncode == 0, proc.stderr
    summary = {k["kernel"]: k for k in json.loads(proc.stdout)["kernels"]}
    assert len(summary) == 13 and "shallowf90.cu" in summary
    proc = benchdb("predict", "--kernel", "shallowf90.cu", "--shape", "700x300", "--json",
                   "--db", url)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    [answer] = json.loads(proc.stdout)["predictions"]
    assert answer["points"] == 700 * 300 and answer["time_s"] > 0
    assert answer["footprint_bytes"] == 13 * 701 * 301 * 8
