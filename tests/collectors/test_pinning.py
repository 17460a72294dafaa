"""CPU claims: benchdb processes measuring at once on one OS pin to CPUs of their own.

Two collections side by side, or the emulated nodes of a Slurm cluster on one host,
each used to pin to the first CPU and measure at half speed
(docs/findings/slurm.md).  Every test points the claims at its own folder, so that
the other pytest workers' pinnings do not take part.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path

import pytest
from benchdb.collectors import pinning
from benchdb.collectors.pinning import claim_cpus, pinned

two_cpus = pytest.mark.skipif(
    len(os.sched_getaffinity(0)) < 2, reason="needs 2 CPUs this process may use"
)

HOLDER = """
import sys
from pathlib import Path
from benchdb.collectors import pinning
pinning.CLAIMS = Path(sys.argv[1])
with pinning.pinned(int(sys.argv[2])) as placement:
    print(placement, flush=True)
    sys.stdin.readline()
"""


@pytest.fixture
def claims(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "claims"
    monkeypatch.setattr(pinning, "CLAIMS", folder)
    return folder


def _holder(folder: Path, threads: int) -> tuple[subprocess.Popen[str], str]:
    """Another process pinned to ``threads`` CPUs, holding them until its stdin closes."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(folder), str(threads)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def _end(proc: subprocess.Popen[str]) -> None:
    proc.kill()
    proc.wait()


@two_cpus
def test_a_second_process_pins_to_a_cpu_the_first_does_not_hold(claims: Path) -> None:
    first_cpu = sorted(os.sched_getaffinity(0))[0]
    other, theirs = _holder(claims, 1)
    try:
        with pinned(1) as mine:
            assert theirs == f"cpus:{first_cpu}"
            assert mine.startswith("cpus:") and mine != theirs
            assert os.sched_getaffinity(0) == {int(mine.removeprefix("cpus:"))}
    finally:
        _end(other)


@two_cpus
def test_a_claim_ends_with_its_process_however_it_ends(claims: Path) -> None:
    other, theirs = _holder(claims, 1)
    other.send_signal(signal.SIGKILL)
    other.wait()
    with pinned(1) as mine:
        assert mine == theirs  # the first CPU is free again


def test_where_every_cpu_is_claimed_the_first_ones_are_shared(claims: Path) -> None:
    with ExitStack() as held:
        assert claim_cpus([4, 5, 6], 3, 0, held) == [4, 5, 6]
        with ExitStack() as later:  # another open file: flock is per descriptor
            assert claim_cpus([4, 5, 6], 2, 0, later) == [4, 5]
            assert claim_cpus([4, 5, 6], 1, 2, later) == [6]


def test_claims_start_at_first_wrap_round_and_skip_the_held(claims: Path) -> None:
    with ExitStack() as a, ExitStack() as b, ExitStack() as c:
        assert claim_cpus([4, 5, 6], 1, 1, a) == [5]
        assert claim_cpus([4, 5, 6], 2, 1, b) == [4, 6]  # 5 held: on to 6, then round to 4
        assert claim_cpus([4, 5, 6], 1, 0, c) == [4]  # all held now: 4 is shared
    with ExitStack() as d:  # closed stacks released every claim
        assert claim_cpus([4, 5, 6], 3, 0, d) == [4, 5, 6]
        assert sorted(p.name for p in claims.iterdir()) == ["cpu4", "cpu5", "cpu6"]


def test_without_a_folder_for_claims_every_cpu_counts_as_free(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a file"
    blocker.write_text("")
    monkeypatch.setattr(pinning, "CLAIMS", blocker / "claims")  # cannot be made
    with ExitStack() as a, ExitStack() as b:
        assert claim_cpus([4, 5], 1, 0, a) == [4]
        assert claim_cpus([4, 5], 1, 0, b) == [4]
