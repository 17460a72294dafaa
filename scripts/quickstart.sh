#!/usr/bin/env bash
# Set up and run the main job on the embedded SQLite default: the README's first command.
# Creates ./.venv, installs benchdb, describes this machine, runs a quick collection
# (about a minute), shows the shallow-water cu loop across the cache levels and
# answers a first prediction.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e .
.venv/bin/benchdb machine show
.venv/bin/benchdb collect --quick
.venv/bin/benchdb measurements show --kernel shallow.cu
.venv/bin/benchdb predict --kernel shallow.cu --shape 500x500 --iterations 100
