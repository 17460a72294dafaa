"""The switches CI sets: a missing mpiexec or chromium skips the tests that need it, unless
BENCHDB_REQUIRE_MPI=1 or BENCHDB_REQUIRE_CHROMIUM=1 makes it a failure."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def _pytest(test: str, **env: str) -> str:
    """The output of pytest running ``test`` with ``env`` set."""
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test],
        capture_output=True, text=True, env={**os.environ, **env}, timeout=300,
    )  # fmt: skip
    return proc.stdout


@pytest.mark.parametrize(("require", "outcome"), [("", "1 skipped"), ("1", "1 error")])
def test_a_missing_mpiexec_skips_or_fails(require: str, outcome: str) -> None:
    out = _pytest(
        "tests/comm/test_mpi_jobs.py::test_collect_fit_and_check_the_halo",
        BENCHDB_MPIEXEC="/no/such/mpiexec",
        BENCHDB_REQUIRE_MPI=require,
    )
    assert outcome in out, out
    if require:
        assert "BENCHDB_REQUIRE_MPI=1 but no mpiexec" in out


@pytest.mark.parametrize(("require", "outcome"), [("", "2 skipped"), ("1", "2 error")])
def test_a_missing_chromium_skips_or_fails(require: str, outcome: str) -> None:
    out = _pytest(
        "tests/regress/test_report.py::test_the_page_draws_every_chart_in_headless_chromium",
        BENCHDB_CHROMIUM="/no/such/chromium",
        BENCHDB_REQUIRE_CHROMIUM=require,
    )
    assert outcome in out, out
    if require:
        assert "BENCHDB_REQUIRE_CHROMIUM=1 but no chromium (/no/such/chromium)" in out
