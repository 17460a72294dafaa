"""benchmarks/program_validation.py refuses bad input (argparse: exit 2, the fix in its
last line) before it opens the database."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import EXAMPLES

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "program_validation.py"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--rounds", "0"], "--rounds: '0': give a whole number of at least 1"),
        (["--repeats", "x"], "--repeats: 'x': give a whole number of at least 1"),
        (["--grids", "60x60"], "write MxN:steps, e.g. 600x400:300"),
        (["--grids", "60x60:10,0x60:10"], "zero or negative extent"),
        (["--program", "nowhere.toml"], "cannot read spec"),
    ],
)
def test_bad_input_is_refused_before_the_database_is_opened(
    args: list[str], says: str, tmp_path: Path
) -> None:
    db = tmp_path / "never.sqlite"
    given = {"--program": str(EXAMPLES / "shallow_mpi" / "benchdb.toml"), "--grids": "60x60:10"}
    given |= dict(zip(args[::2], args[1::2], strict=True))
    argv = [x for pair in given.items() for x in pair]
    done = subprocess.run(
        [sys.executable, str(SCRIPT), *argv, "--db", f"sqlite:///{db}"],
        capture_output=True, text=True, check=False, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2 and says in done.stderr.splitlines()[-1], done.stderr
    assert "Traceback" not in done.stderr and not db.exists()
