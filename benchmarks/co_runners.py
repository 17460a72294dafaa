"""Other processes on the host, started on purpose: the conditions of issue 32's
interference benchmark, shared by ``interference.py`` and ``heldout_programs.py``.

* quiet: nothing started here (the host's other tenants still run);
* bursty: two co-runner processes, each busy about 200 ms in every second at a
  random phase, unpinned;
* saturated: one CPU-bound co-runner per core;
* memory: one co-runner streaming a 256 MiB array (bandwidth, not CPU time).

Each co-runner stops itself after its deadline and is killed when its block ends.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

BURSTY = """
import random, sys, time
deadline = time.time() + float(sys.argv[1])
time.sleep(random.random())
while time.time() < deadline:
    start = time.time()
    while time.time() - start < 0.2:
        pass
    time.sleep(0.8)
"""
SPIN = """
import sys, time
deadline = time.time() + float(sys.argv[1])
while time.time() < deadline:
    pass
"""
STREAM = """
import sys, time
import numpy as np
deadline = time.time() + float(sys.argv[1])
a = np.ones(2**25)
b = np.empty_like(a)
while time.time() < deadline:
    np.copyto(b, a)
"""
CO_RUNNERS = {
    "quiet": (),
    "bursty": (BURSTY, BURSTY),
    "saturated": (SPIN,) * (os.cpu_count() or 1),
    "memory": (STREAM,),
}


@contextmanager
def co_runners(condition: str, max_seconds: float) -> Iterator[None]:
    """The condition's co-runner processes, running for the block; killed after it."""
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(max_seconds)])
        for code in CO_RUNNERS[condition]
    ]
    try:
        time.sleep(0.5 if procs else 0)  # let them start (numpy's import, the first burst)
        yield
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()
