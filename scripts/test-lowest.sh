#!/usr/bin/env bash
# The test suite on the lowest versions of the direct dependencies that pyproject.toml allows,
# so that its declared lower bounds are proven to work (CI runs it after scripts/test.sh).
# Creates ./.venv-lowest; uv resolves with --resolution lowest-direct.  --setup-only: only that.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv-lowest-tools
.venv-lowest-tools/bin/python -m pip install -q uv
.venv-lowest-tools/bin/uv venv -q --seed --allow-existing -p python3 .venv-lowest
VIRTUAL_ENV="$PWD/.venv-lowest" .venv-lowest-tools/bin/uv pip install -q \
  --resolution lowest-direct -e ".[test]"
.venv-lowest/bin/python -m pip list 2>/dev/null | grep -iE \
  '^(sqlalchemy|alembic|pandas|numpy|scipy|typer|numba|rich|psycopg|matplotlib|plotly|platformdirs|pyarrow|mpi4py|mpich) '
if [ "${1:-}" = "--setup-only" ]; then  # .ci/run builds it while the suite runs
  exit 0
fi
# One worker per CPU, at most 4: each worker's tests start processes of their own (MPI
# ranks, A/B workers, compilers).  A test marked `alone` (timings judged, the Slurm
# cluster's jobs) runs with no other test beside it (tests/alone.py).
WORKERS="-n auto --maxprocesses 4"
set +e
.venv-lowest/bin/python -m pytest $WORKERS "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: failing, a suite that tests nothing is not green" >&2
  exit 1
fi
exit "$status"
