"""Hostile paths and numbers (issue 54, classes 2 and 3).

Every path the user gives benchdb to read, and every ``--out``, is checked for its kind
before it is opened (benchdb/inputs.py): a FIFO (whose read waits forever), a device or
a folder is one line naming the fix, exit 2.  Every float option where infinity means
nothing refuses ``inf`` and ``nan`` while the command line is parsed, before a database
is opened or a run created; every printed duration is bounded (benchdb/units.py)."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

from benchdb.units import fmt_duration
from tests.clihelpers import assert_user_error, benchdb

READERS = [
    ["predict", "-k", "stream.triad", "--shapes-file", "{path}"],
    ["collect", "--program", "{path}", "--dry-run"],
    ["collect", "--plugin", "{path}", "--dry-run"],
    ["refine", "-k", "stream.triad", "--program", "{path}"],
    ["ab", "--base-program", "{path}"],
    ["import", "{path}"],
    ["compare", "1", "2", "--config", "{path}"],
    ["comm", "show", "--machine-file", "{path}"],
    ["comm", "predict", "--pattern", "allreduce", "--ranks", "4", "--machine-file", "{path}"],
    ["app", "predict", "--grid", "64x64", "--program", "{path}"],
    ["scenario", "--grid", "64x64", "--ranks", "4", "--power-file", "{path}"],
]
WRITERS = [
    ["export", "--out", "{dir}/out.json"],
    ["plot", "roofline", "--out", "{dir}/out.png"],
    ["report", "--out", "{dir}/out.png"],  # a FIFO where a folder goes
    ["comm", "show", "--plot", "{dir}/out.png"],
]


@pytest.fixture
def specials(tmp_path: Path) -> dict[str, str]:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (tmp_path / "folder").mkdir()
    return {"fifo": str(fifo), "device": "/dev/null", "folder": str(tmp_path / "folder")}


@pytest.mark.parametrize("kind", ["fifo", "device", "folder"])
@pytest.mark.parametrize("args", READERS, ids=lambda a: " ".join(a[:3]))
def test_a_special_file_to_read_is_one_line_not_a_hang(
    tmp_path: Path, specials: dict[str, str], kind: str, args: list[str]
) -> None:
    path = specials[kind]
    db = tmp_path / "new.sqlite"
    proc = benchdb(*(a.format(path=path) for a in args), "--db", f"sqlite:///{db}", timeout=60)
    assert_user_error(proc, f"{path} is a")
    assert not db.exists()


@pytest.mark.parametrize("args", WRITERS, ids=lambda a: " ".join(a[:2]))
def test_a_special_file_to_write_is_one_line_and_never_replaced(
    tmp_path: Path, args: list[str]
) -> None:
    for name in ("out.json", "out.png"):
        os.mkfifo(tmp_path / name)
    db = f"sqlite:///{tmp_path / 'new.sqlite'}"
    proc = benchdb(*(a.format(dir=tmp_path) for a in args), "--db", db, timeout=60)
    assert_user_error(proc, "out.")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json", "out.png"]
    assert all((tmp_path / name).is_fifo() for name in ("out.json", "out.png"))


FLOATS = [
    ["collect", "-k", "stream.triad", "--time-budget", "{x}"],
    ["collect", "-k", "stream.triad", "--sample-time", "{x}", "--dry-run"],
    ["refine", "-k", "stream.triad", "--time-budget", "{x}"],
    ["ab", "-k", "stream.triad", "--threshold", "{x}"],
    ["ab", "-k", "stream.triad", "--time-budget", "{x}"],
    ["compare", "1", "2", "--threshold", "{x}"],
    ["history", "-k", "stream.triad", "--min-change", "{x}"],
    ["comm", "collect", "--timeout", "{x}"],
    ["app", "predict", "--grid", "64x64", "--scale-compute", "{x}"],
    ["scenario", "--grid", "64x64", "--ranks", "4", "--dram-w", "{x}"],
    ["app", "run", "--grid", "64x64", "--timeout", "{x}"],
]


@pytest.mark.parametrize("x", ["inf", "nan"])
@pytest.mark.parametrize("args", FLOATS, ids=lambda a: " ".join(a[:4]))
def test_a_non_finite_number_is_refused_before_anything_is_opened(
    tmp_path: Path, args: list[str], x: str
) -> None:
    db = tmp_path / "new.sqlite"
    proc = benchdb(*(a.format(x=x) for a in args), "--db", f"sqlite:///{db}", timeout=60)
    # "is not a finite number", or a range's own bound where the option has one
    assert_user_error(proc, f"Invalid value for '{args[args.index('{x}') - 1]}'")
    assert not db.exists()  # no database opened, no run left behind


@pytest.mark.parametrize("seconds", [1e308, 1e30, 3e6, -1e308, math.inf, -math.inf, math.nan])
def test_every_duration_is_printed_in_a_few_characters(seconds: float) -> None:
    assert len(fmt_duration(seconds)) <= 12


def test_a_huge_time_budget_is_printed_short(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'new.sqlite'}"
    proc = benchdb(
        "collect", "-k", "stream.triad", "--time-budget", "1e308", "--dry-run", "--db", db
    )
    assert proc.returncode == 0, proc.stderr
    assert "time budget of 1.16e+303 d" in proc.stdout + proc.stderr
    assert max(len(line) for line in (proc.stdout + proc.stderr).splitlines()) < 400
