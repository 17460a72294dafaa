#!/usr/bin/env bash
# Set up (if needed) and run the test suite: the README's test command.
# Creates ./.venv, installs benchdb with its test extras, lints, then runs pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".[test]"
.venv/bin/ruff check .
.venv/bin/ruff format --check .
# One worker per CPU, at most 4: each worker's tests start processes of their own (MPI
# ranks, A/B workers, compilers).  A test marked `alone` (timings judged, the Slurm
# cluster's jobs) runs with no other test beside it (tests/alone.py).
WORKERS="-n auto --maxprocesses 4"
# Every test but the real Slurm jobs, the whole MPI runs and the end-to-end runs marked slow:
# .ci/run runs those after this (`bash scripts/test.sh -m "slurm or slow or mpi"`).  A -m
# given to this script replaces the selection; -m "" runs every test.
SELECT="not slurm and not slow and not mpi"
set +e
.venv/bin/python -m pytest $WORKERS -m "$SELECT" "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: failing, a suite that tests nothing is not green" >&2
  exit 1
fi
exit "$status"
