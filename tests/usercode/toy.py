"""A toy program for the program tests: a STREAM-like triad over n elements, timed by itself.

Usage: toy.py N REPS [--fail-above N] [--garbage] [--hang] [--check-fail] [--random-checksum]
It prints its timings in benchdb's line protocol (docs/programs.md); the flags make it
misbehave in the ways the tests need.
"""

import argparse
import random
import sys
import time

import numpy as np

parser = argparse.ArgumentParser()
parser.add_argument("n", type=int)
parser.add_argument("reps", type=int)
parser.add_argument("--fail-above", type=int)
parser.add_argument("--garbage", action="store_true")
parser.add_argument("--hang", action="store_true")
parser.add_argument("--check-fail", action="store_true")
parser.add_argument("--random-checksum", action="store_true")
args = parser.parse_args()

if args.fail_above is not None and args.n > args.fail_above:
    print(f"toy: n = {args.n} is too large for this build", file=sys.stderr)
    sys.exit(3)
if args.hang:
    time.sleep(3600)

b = np.linspace(0.0, 1.0, args.n)
c = np.linspace(1.0, 2.0, args.n)
a = np.empty_like(b)
np.multiply(c, 0.5, out=a)  # warm-up: first touch
a += b
checksum = random.random() if args.random_checksum else float(a.sum())
print("toy: warmed up")  # not a protocol line: ignored
print(f"BENCHDB checksum {checksum!r}")
triad = scale = 0.0
for _ in range(args.reps):
    t0 = time.perf_counter()
    np.multiply(c, 0.5, out=a)
    a += b
    t1 = time.perf_counter()
    np.multiply(a, 0.5, out=c)
    t2 = time.perf_counter()
    triad += t1 - t0
    scale += t2 - t1
if args.garbage:
    print("BENCHDB time triad fast")
else:
    print(f"BENCHDB time triad {triad:.9e}")
print(f"BENCHDB time scale {scale:.9e}")
print("BENCHDB check fail values grew" if args.check_fail else "BENCHDB check pass")
