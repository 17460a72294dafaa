#!/usr/bin/env bash
# Measure the base and the change of a pull request in one run (benchdb ab).
#
#   ab-change.sh BASE_DIR CHANGE_DIR [COMMENT.md]
#
# BASE_DIR and CHANGE_DIR are checkouts of the project (the pull request's base and
# head).  Each is installed into a virtualenv of its own: benchdb (BENCHDB_PACKAGE),
# then the project's kernels (BENCHDB_INSTALL, run inside the checkout with that
# virtualenv first on PATH).  Then `benchdb ab` runs the base side with the base's
# Python and the change side with the change's, both on this machine at once,
# judges the paired samples and writes COMMENT.md (default: benchdb-comment.md) as
# Markdown, which it also prints.  A project whose kernels are a plugin file or a
# program spec in the checkout needs no virtualenvs: set BENCHDB_PACKAGE to nothing
# and both sides run the benchdb on PATH, each loading its own checkout's file.
#
# Environment:
#   BENCHDB_URL      the database (default: a new SQLite file in a temporary folder)
#   BENCHDB_PACKAGE  what pip installs as benchdb (default: benchdb); empty: no
#                    virtualenvs, both sides run the benchdb on PATH
#   BENCHDB_INSTALL  how to install the project's kernels in a checkout (default:
#                    "python -m pip install --quiet ."; empty: nothing to install)
#   BENCHDB_PROGRAM  a program spec inside each checkout (e.g. benchdb.toml): the base
#                    side runs BASE_DIR's build, the change side CHANGE_DIR's
#   BENCHDB_PLUGIN   a plugin file inside each checkout (e.g. kernels.py): the base
#                    side loads BASE_DIR's, the change side CHANGE_DIR's
#   BENCHDB_AB       more options of `benchdb ab` (e.g. "--kernels my_model")
#
# Exit status: that of `benchdb ab`: 0 nothing slower, 1 a kernel got slower, 2 bad
# input, 3 a worker died; anything else: a step failed.
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 BASE_DIR CHANGE_DIR [COMMENT.md]" >&2
  exit 2
fi
base=$(cd "$1" && pwd)
change=$(cd "$2" && pwd)
comment=$(realpath -m "${3:-benchdb-comment.md}")
: "${BENCHDB_URL:=sqlite:///$(mktemp -d)/benchdb.sqlite}"
package=${BENCHDB_PACKAGE-benchdb}
install=${BENCHDB_INSTALL-python -m pip install --quiet .}
export BENCHDB_URL
envs=$(mktemp -d)

environment() {  # DIR NAME: a virtualenv NAME with benchdb and checkout DIR's kernels
  python -m venv "$envs/$2"
  "$envs/$2/bin/python" -m pip install --quiet "$package"
  if [ -n "$install" ]; then (cd "$1" && PATH="$envs/$2/bin:$PATH" eval "$install"); fi
}

if [ -n "$package" ]; then
  environment "$base" base
  environment "$change" change
  sides=(--base-python "$envs/base/bin/python" --change-python "$envs/change/bin/python")
  benchdb=$envs/change/bin/benchdb
else
  sides=()
  benchdb=benchdb
fi
if [ -n "${BENCHDB_PROGRAM:-}" ]; then
  sides+=(--base-program "$base/$BENCHDB_PROGRAM" --change-program "$change/$BENCHDB_PROGRAM")
fi
if [ -n "${BENCHDB_PLUGIN:-}" ]; then
  sides+=(--base-plugin "$base/$BENCHDB_PLUGIN" --change-plugin "$change/$BENCHDB_PLUGIN")
fi

cd "$change"
status=0
# shellcheck disable=SC2086  # BENCHDB_AB is a list of options
"$benchdb" ab "${sides[@]}" ${BENCHDB_AB:-} --markdown > "$comment" || status=$?
cat "$comment"
exit "$status"
