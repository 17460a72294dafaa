#!/usr/bin/env bash
# Set up and run the main job on the embedded SQLite default: the README's first command.
# Creates ./.venv, installs benchdb, then collects a quick sweep on this machine.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e .
.venv/bin/benchdb machine show
.venv/bin/benchdb machine register
