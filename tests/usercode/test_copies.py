"""Several copies of a program at once (a populated node, ``app calibrate --program``):
started together, one a CPU, stopped together, and their reports merged.  No timing is
asserted: the copies meet at a rendezvous that copies run one after the other would miss."""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from benchdb.kernels.api import PointFailure
from benchdb.kernels.program import run_commands
from benchdb.kernels.sources import load_program

from .programs import toy_spec

# Each copy leaves a file named by its pid, then waits (up to 20 s) for the other's, and
# prints the CPUs it may run on: a copy run alone fails.
RENDEZVOUS = """
import os, sys, time
from pathlib import Path
here = Path(sys.argv[1])
(here / str(os.getpid())).touch()
deadline = time.monotonic() + 20
while len(list(here.iterdir())) < 2:
    if time.monotonic() > deadline:
        sys.exit("alone")
    time.sleep(0.01)
print(sorted(os.sched_getaffinity(0)))
"""

two_cpus = pytest.mark.skipif(
    len(os.sched_getaffinity(0)) < 2, reason="needs 2 CPUs this process may use"
)


@two_cpus
def test_copies_run_at_once_each_on_its_own_cpu(tmp_path: Path) -> None:
    argv = [sys.executable, "-c", RENDEZVOUS, str(tmp_path)]
    cpus = sorted(os.sched_getaffinity(0))[:2]
    done = run_commands([argv, argv], tmp_path, os.environ, 60, cpus)
    assert [d.stdout.strip() for d in done] == [f"[{cpus[0]}]", f"[{cpus[1]}]"]
    assert all(d.schedstat is not None and d.schedstat.on_cpu_s > 0 for d in done)


def test_one_copy_past_the_timeout_stops_them_all(tmp_path: Path) -> None:
    sleeper = [
        sys.executable,
        "-c",
        "import os, time; print(os.getpid(), flush=True); time.sleep(60)",
    ]
    quick = [sys.executable, "-c", "pass"]
    with pytest.raises(PointFailure, match="timed out after 1 s"):
        run_commands([quick, sleeper], tmp_path, os.environ, 1)


def test_a_copy_that_fails_fails_the_run(tmp_path: Path) -> None:
    ok = [sys.executable, "-c", "print('fine')"]
    bad = [sys.executable, "-c", "import sys; sys.exit('copy broke')"]
    with pytest.raises(PointFailure, match="exit status 1: copy broke"):
        run_commands([ok, bad], tmp_path, os.environ, 60)


def test_copies_report_the_mean_and_must_agree(tmp_path: Path) -> None:
    bench, _ = load_program(toy_spec(tmp_path))
    one = bench.prepare((20000,), "float64", 1)
    two = replace(bench, copies=2).prepare((20000,), "float64", 1)
    assert two.copies == 2 and two.checksum() == one.checksum()
    times = two.run(3)
    assert set(times) == {"toy.triad", "toy.scale"} and all(t > 0 for t in times.values())
    seen = two.last_schedstat()
    assert seen is None or seen.on_cpu_s > 0

    (tmp_path / "random").mkdir()
    disagreeing, _ = load_program(toy_spec(tmp_path / "random", "--random-checksum"))
    with pytest.raises(PointFailure, match="2 copies ran the same input and reported checksums"):
        replace(disagreeing, copies=2).prepare((2000,), "float64", 1)


@two_cpus
def test_copies_keep_a_cpu_each_while_the_sweep_pins_itself(tmp_path: Path) -> None:
    """The sweep pins its process to one CPU while it measures a point; the copies of
    ``app calibrate --program`` it then starts must still get a CPU each.  They used to
    inherit the one CPU, and ran half as fast as a populated node does."""
    from benchdb.collectors.app.populated_program import populated_program_plan
    from benchdb.collectors.pinning import pinned

    from benchdb.machine import detect_machine

    plan = populated_program_plan(
        str(toy_spec(tmp_path)), 2, detect_machine(), sizes_spec="2000", passes=1
    )
    [bench] = plan.catalog.benchmarks.values()
    with pinned(1):
        prepared = bench.prepare((2000,), "float64", 1)
    assert prepared.copies == 2
    assert prepared.cpus == tuple(sorted(os.sched_getaffinity(0))[:2])


@two_cpus
def test_copies_refuse_a_process_allowed_fewer_cpus_than_copies() -> None:
    from benchdb.collectors.app.populated_program import copy_cpus
    from benchdb.collectors.pinning import pinned

    from benchdb.errors import UserError

    with pinned(1), pytest.raises(UserError, match="2 copies need a CPU each"):
        copy_cpus(2)
