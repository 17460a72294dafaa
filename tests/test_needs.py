"""The switches CI sets: a missing mpiexec skips the MPI tests, unless BENCHDB_REQUIRE_MPI=1."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


@pytest.mark.parametrize(("require", "outcome"), [("", "1 skipped"), ("1", "1 error")])
def test_a_missing_mpiexec_skips_or_fails(require: str, outcome: str) -> None:
    env = {**os.environ, "BENCHDB_MPIEXEC": "/no/such/mpiexec", "BENCHDB_REQUIRE_MPI": require}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "tests/comm/test_mpi_jobs.py::test_collect_fit_and_check_the_halo"],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert outcome in proc.stdout, proc.stdout
    if require:
        assert "BENCHDB_REQUIRE_MPI=1 but no mpiexec" in proc.stdout
