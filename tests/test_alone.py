"""``alone`` tests (tests/alone.py) run with nothing beside them on several workers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("xdist")

SUITE = """
import time
from pathlib import Path

import pytest

LOG = Path(__file__).with_name("log")


def _spell(name):
    start = time.time()
    time.sleep(0.3)
    with LOG.open("a") as log:
        log.write(f"{name} {start} {time.time()}\\n")


@pytest.mark.parametrize("i", range(6))
def test_beside(i):
    _spell(f"beside{i}")


@pytest.mark.alone
@pytest.mark.parametrize("i", range(2))
def test_alone(i):
    _spell(f"alone{i}")
"""


def test_an_alone_test_overlaps_no_other_while_the_rest_run_side_by_side(tmp_path: Path) -> None:
    (tmp_path / "test_suite.py").write_text(SUITE)
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "tests.alone", "-n", "2",
         "-p", "no:cacheprovider", "-o", "markers=alone: x", "--rootdir", str(tmp_path),
         str(tmp_path / "test_suite.py")],
        capture_output=True, text=True, cwd=root, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    spells = {
        name: (float(a), float(b))
        for name, a, b in (line.split() for line in (tmp_path / "log").read_text().splitlines())
    }
    assert len(spells) == 8

    def overlap(x: str, y: str) -> bool:
        return spells[x][0] < spells[y][1] and spells[y][0] < spells[x][1]

    for a in ("alone0", "alone1"):
        assert not [o for o in spells if o != a and overlap(a, o)], spells
    assert any(overlap(f"beside{i}", f"beside{j}") for i in range(6) for j in range(i)), spells
