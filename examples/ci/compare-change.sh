#!/usr/bin/env bash
# Benchmark the base and the change of a pull request on this machine, then compare them.
#
#   compare-change.sh BASE_DIR CHANGE_DIR [COMMENT.md]
#
# BASE_DIR and CHANGE_DIR are checkouts of the project (the pull request's base and
# head).  In each, the project's kernels are installed (BENCHDB_INSTALL) and collected
# (benchdb collect $BENCHDB_COLLECT --tag base|change) into one database, on this one
# machine: runs of different machines are never compared.  Then, from CHANGE_DIR (so its
# benchdb.toml or pyproject.toml [tool.benchdb] sets the thresholds), `benchdb compare
# base change --format markdown` writes COMMENT.md (default: benchdb-comment.md) and
# prints it.
#
# Environment:
#   BENCHDB_URL      the database (default: a new SQLite file in a temporary folder)
#   BENCHDB_COLLECT  options of `benchdb collect` (default: --quick); e.g.
#                    "--program benchdb.toml --quick" for a program in any language,
#                    "--kernels my_model --sizes 64x64,256x256,1024x1024" for a plugin
#   BENCHDB_INSTALL  how to install the project's kernels in the current checkout
#                    (default: "python -m pip install --quiet ."; empty: nothing to
#                    install, e.g. a program that --program builds itself)
#   BENCHDB_BASE_RUNS  collections of the base (default 3): compare charges the
#                    scatter between them, the runner's own drift, to every
#                    kernel's interval (1: the two runs alone decide; it takes
#                    at least 3)
#
# Exit status: that of `benchdb compare`: 0 no regression, 1 a kernel got slower,
# 2 bad input (a bad config file, no common point); anything else: a step failed.
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 BASE_DIR CHANGE_DIR [COMMENT.md]" >&2
  exit 2
fi
base=$(cd "$1" && pwd)
change=$(cd "$2" && pwd)
comment=$(realpath -m "${3:-benchdb-comment.md}")
: "${BENCHDB_URL:=sqlite:///$(mktemp -d)/benchdb.sqlite}"
: "${BENCHDB_COLLECT:=--quick}"
install=${BENCHDB_INSTALL-python -m pip install --quiet .}
base_runs=${BENCHDB_BASE_RUNS:-3}
if ! [[ $base_runs =~ ^[1-9][0-9]*$ ]]; then
  echo "BENCHDB_BASE_RUNS=$base_runs is not a number of runs; set it to 1 or more, e.g. 3" >&2
  exit 2
fi
export BENCHDB_URL

collect() {  # DIR TAG...: install the kernels of checkout DIR, collect once per TAG
  local dir=$1
  shift
  (
    cd "$dir"
    if [ -n "$install" ]; then eval "$install"; fi
    for tag in "$@"; do
      echo "== $tag: $dir" >&2
      # shellcheck disable=SC2086  # BENCHDB_COLLECT is a list of options
      benchdb collect $BENCHDB_COLLECT --tag "$tag" --quiet
    done
  )
}

replicates=()
for ((i = 1; i < base_runs; i++)); do replicates+=("base-replicate-$i"); done
collect "$base" "${replicates[@]}" base  # the base last: the newest of its replicates
collect "$change" change

cd "$change"
status=0
benchdb compare base change --format markdown > "$comment" || status=$?
cat "$comment"
exit "$status"
