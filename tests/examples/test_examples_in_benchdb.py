"""The shipped examples through benchdb itself, as the README runs them: swept and predicted.

CI installs gfortran (.ci/run), so there the Fortran example is never skipped.  The plugin
is installed with pip into a folder of the test's own, on PYTHONPATH only for the benchdb
processes that should see it: the test environment stays as it was.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.clihelpers import benchdb

from .conftest import EXAMPLES


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


@pytest.fixture(scope="module")
def ocean_installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The example plugin installed with pip into a folder of its own: the environment
    variables under which benchdb finds it (an entry point on the Python path)."""
    work = tmp_path_factory.mktemp("ocean")
    source = work / "ocean_plugin"
    shutil.copytree(EXAMPLES / "ocean_plugin", source)  # pip builds in the source folder
    target = work / "site"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
         "--target", str(target), str(source)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return {"PYTHONPATH": str(target)}


def test_the_installed_plugin_is_listed_swept_and_predicted(
    ocean_installed: dict[str, str], tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'ocean.sqlite'}"
    listed = benchdb("kernels", "--json", "--db", url, env=ocean_installed)
    assert listed.returncode == 0, listed.stderr
    kernels = {k["name"]: k for k in json.loads(listed.stdout)}
    assert kernels["ocean.upwind"]["origin"] == "plugin"
    assert kernels["ocean.columns"]["points_here"] == 0
    proc = benchdb("collect", "--kernels", "ocean", "--quick", "--db", url, "--json",
                   env=ocean_installed)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert {c["benchmark"] for c in report["checked"]} == {"ocean.upwind", "ocean.columns"}
    assert {k["kernel"] for k in report["kernels"]} == {"ocean.upwind", "ocean.columns"}
    proc = benchdb(
        "predict", "--kernel", "ocean.upwind", "--shape", "700x300", "--json", "--db", url
    )  # fmt: skip  (no plugin needed: the database defines it)
    assert proc.returncode == 0, proc.stderr
    [answer] = json.loads(proc.stdout)["predictions"]
    assert answer["points"] == 700 * 300 and answer["footprint_bytes"] == 4 * 702 * 302 * 8
