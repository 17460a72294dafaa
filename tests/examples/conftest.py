"""The examples, built once per session in a temporary copy (the repository stays clean)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="session")
def binary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example built with ``make`` in a temporary copy of its folder.

    Skipped where gfortran or make is missing, except in CI (``CI=true``),
    where the example must be tested.
    """
    missing = [tool for tool in ("gfortran", "make") if shutil.which(tool) is None]
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail(
                "gfortran is required in CI to test examples/shallow_fortran; "
                f"{' and '.join(missing)} not found on PATH"
            )
        pytest.skip(f"{' and '.join(missing)} missing: cannot build examples/shallow_fortran")
    folder = tmp_path_factory.mktemp("example") / "shallow_fortran"
    # Leave out a binary built by hand in the repository: make would think it up to date.
    shutil.copytree(
        EXAMPLES / "shallow_fortran",
        folder,
        ignore=shutil.ignore_patterns("shallow", "*.o", "*.mod"),
    )
    done = subprocess.run(["make"], cwd=folder, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        pytest.fail(f"make failed in {folder}:\n{done.stdout}{done.stderr}")
    return folder / "shallow"
