"""A command that only reads never creates a database: a typo in --db or BENCHDB_URL is one
line naming the fix and exit 2, with no file and no folder left behind.  Options are checked
before any database is opened, so a bad option is named even where no database exists."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.clihelpers import assert_user_error, benchdb

READERS = [
    ["runs", "list"],
    ["measurements", "show", "-k", "shallow.cu"],
    ["predict", "-k", "shallow.cu", "-s", "100x100"],
    ["predict", "-k", "myprogram.cu", "-s", "100x100"],
    ["advise", "-k", "shallow.cu", "-s", "2048x2048"],
    ["advise", "-k", "stencil2d5", "-s", "64x64", "--pad", "1", "--measure"],
    ["validate"],
    ["compare", "1", "2"],
    ["history", "-k", "shallow.cu"],
    ["baseline", "show"],
    ["comm", "show"],
    ["scenario", "--grid", "256x256", "--ranks", "1,2"],
    ["app", "predict", "--grid", "256x256", "--decomp", "1x1", "--steps", "10"],
    ["db", "current"],
    ["report", "--out", "{out}/report.html"],
    ["export", "--out", "{out}/points.csv"],
    ["plot", "curve", "-k", "shallow.cu", "--out", "{out}/curve.png"],
    ["comm", "predict", "--decomp", "2x1", "--local", "64x64"],
]


@pytest.mark.parametrize("args", READERS, ids=lambda a: " ".join(a[:2]))
def test_reading_a_database_that_is_not_there_creates_nothing(
    args: list[str], tmp_path: Path
) -> None:
    target = tmp_path / "typo" / "bench.sqlite"
    out = tmp_path / "out"
    out.mkdir()
    proc = benchdb("--db", f"sqlite:///{target}", *(a.format(out=out) for a in args))
    assert_user_error(proc, f"no database at {target}")
    assert not target.parent.exists()
    assert not any(out.iterdir())  # nor the file it would have written


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["predict", "-k", "shallow.cu", "-s", "10x10", "--method", "bogus"], "unknown method"),
        (["predict", "-k", "shallow.cu", "-s", "10x10", "--threads", "0"], "--threads 0"),
        (["advise", "-k", "shallow.cu", "-s", "10x10", "--pad", "99"], "--pad 99"),
    ],
)
def test_a_bad_option_is_named_before_the_database_is_looked_at(
    args: list[str], needle: str, tmp_path: Path
) -> None:
    target = tmp_path / "new.sqlite"
    proc = benchdb("--db", f"sqlite:///{target}", *args)
    assert_user_error(proc, needle)
    assert not target.exists()


def test_writing_commands_still_create_their_database(tmp_path: Path) -> None:
    target = tmp_path / "new" / "bench.sqlite"
    proc = benchdb("--db", f"sqlite:///{target}", "machine", "register")
    assert proc.returncode == 0, proc.stderr
    assert target.exists()
    assert benchdb("--db", f"sqlite:///{target}", "runs", "list").returncode == 0


def test_kernels_without_a_database_lists_what_can_be_collected(tmp_path: Path) -> None:
    target = tmp_path / "typo" / "bench.sqlite"
    proc = benchdb("--db", f"sqlite:///{target}", "kernels", "--json")
    assert proc.returncode == 0, proc.stderr
    assert f"no database at {target}" in proc.stderr
    listed = {k["name"]: k for k in json.loads(proc.stdout)}
    assert listed["shallow.cu"]["points_here"] == 0
    assert not target.parent.exists()


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["app", "calibrate", "--ranks", "-2"], "--ranks -2"),
        (["app", "calibrate", "--ranks", "2", "--sizes", "0x5"], "zero or negative extent"),
        (["app", "calibrate", "--ranks", "-2", "--near", "64x64"], "--ranks -2"),
        (["app", "calibrate", "--timeout", "-1"], "--timeout"),
        (["app", "run", "--grid", "64x64", "--decomp", "2x1", "--timeout", "-1"], "--timeout"),
    ],
)
def test_a_bad_app_option_creates_no_database(args: list[str], needle: str, tmp_path: Path) -> None:
    target = tmp_path / "new" / "bench.sqlite"
    assert_user_error(benchdb("--db", f"sqlite:///{target}", *args), needle)
    assert not target.parent.exists()
