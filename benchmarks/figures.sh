#!/usr/bin/env bash
# Every benchmark's figures, measured in one sequential run on a quiet machine.
#
#   bash benchmarks/figures.sh [OUTDIR]      (default: ./figures-out)
#
# Each step's output goes to OUTDIR/<step>.log, and OUTDIR/steps.log records the load
# average at its start and its wall time: figures taken under load are not comparable
# (on 2 cores a second busy process halves a rank's CPU), so check steps.log first.
set -u
cd "$(dirname "$0")/.."
mkdir -p "${1:-figures-out}"
OUT=$(cd "${1:-figures-out}" && pwd)  # absolute: the database URLs below need it
rm -f "$OUT"/*.sqlite*
B=.venv/bin/benchdb; P=.venv/bin/python
DB=sqlite:///$OUT/main.sqlite
APPDB=sqlite:///$OUT/app.sqlite
step() {
  local name=$1; shift
  echo "== $name $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/steps.log"
  local t0=$SECONDS
  "$@" > "$OUT/$name.log" 2>&1
  echo "   rc=$? wall $((SECONDS - t0)) s" | tee -a "$OUT/steps.log"
}
# kernels
step triad $P benchmarks/triad_bench.py
step breakdown $P benchmarks/shallow_breakdown.py
# collection wall times and the cache staircase
step quick $B collect --quick --db "sqlite:///$OUT/quick.sqlite"
step quick_show $B measurements show --kernel shallow.cu --db "sqlite:///$OUT/quick.sqlite"
step default $B collect --db "$DB" --quiet
# independent sizes (square and rectangular), validation, speed
SHAPES2=23x23,45x45,71x71,97x97,150x150,230x230,310x310,420x420,530x530,700x700,900x900
SHAPES2=$SHAPES2,1300x1300,30x60,60x25,120x80,200x350,400x250,640x480,800x1000,1500x900
SHAPES2=$SHAPES2,50x200,333x111,1000x600,1800x1500,257x1023,700x300,90x140
SHAPES3=7x7x7,11x9x13,15x15x15,21x17x25,30x30x30,41x37x45,55x55x55,70x60x80,90x90x90
SHAPES3=$SHAPES3,120x100x110,150x150x150,200x180x190,250x250x250,23x47x31,64x32x48
SHAPES3=$SHAPES3,100x200x50,300x150x100,37x37x74,130x90x60,45x180x30
step valid2d $B collect --db "$DB" --kernels shallow,stencil2d5,jacobi2d --sizes "$SHAPES2" \
  --tag validation --quiet
step valid3d $B collect --db "$DB" --kernels stencil3d7 --sizes "$SHAPES3" --tag validation --quiet
step validate $B validate --db "$DB" --json
step predict_speed $P benchmarks/predict_speed.py --db "$DB" --kernel shallow.cu
# false alarms on unchanged code (real collections); detection of injected slowdowns
step fpr $P benchmarks/false_positive_rate.py --runs 11 --db "sqlite:///$OUT/fpr.sqlite"
step detection $P benchmarks/regression_detection.py --trials 5
# odd shapes against the floor, the drift and the row step; the row-length residue
rm -rf "$OUT/heldout"
step heldout $P benchmarks/heldout.py --refine 300 --rows-2x-only --methods pchip,linear \
  --workdir "$OUT/heldout" --detail
step row_residue $P benchmarks/row_residue.py --db "sqlite:///$OUT/residue.sqlite"
step heldout_programs $P benchmarks/heldout_programs.py
# MPI against plain C, postal fit, halo model
step pingpong $P benchmarks/c_pingpong.py --rounds 4
# whole-run prediction against real MPI runs
step app_collect $B collect --kernels shallow --db "$APPDB" --quiet
step app_calibrate $B app calibrate --ranks 2 --db "$APPDB"
step comm_collect $B comm collect --ranks 2 --db "$APPDB"
step comm_fit $B comm fit --db "$APPDB"
step comm_show $B comm show --db "$APPDB"
step app_validation $P benchmarks/app_validation.py --db "$APPDB" --near --rounds 3
echo "== done $(date +%T)" | tee -a "$OUT/steps.log"
