"""Byte-identical output of ``predict``, ``validate``, ``compare`` and ``scenario`` on a
fixed database: a refactor that changes a number, a column or a word fails here.

The database is built in the test from synthetic runs with known curves
(:mod:`tests.predict.synth`, :mod:`tests.regress.rows`) on a described machine and
software, never measured, so the outputs are the same on every host.  The commands name
that machine (``--machine``) and read the database from ``BENCHDB_URL``, so neither
this host nor the temporary path reaches their output; stdout is compared byte for
byte with the files in ``tests/cli/golden/``.  The JSON files carry every digit of the
fits, which other versions of numpy, scipy and pandas move in the last places: under
versions other than ``numerics.txt`` names (the lowest-versions run), the JSON outputs
are compared with their numbers rounded to 9 significant digits.

After a change meant to alter an output, write the files anew and review the diff::

    BENCHDB_UPDATE_GOLDEN=1 python -m pytest tests/cli/test_golden.py
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from datetime import datetime, timedelta
from importlib.metadata import version
from pathlib import Path

import pytest
from sqlalchemy import select

from benchdb.db.engine import open_database
from benchdb.db.models import Run
from benchdb.environment import EnvironmentInfo
from benchdb.machine import CacheLevel, MachineInfo
from tests.clihelpers import benchdb
from tests.predict.synth import add_run, square_sizes, step_curve
from tests.regress import rows

GOLDEN = Path(__file__).parent / "golden"
NUMERICS = GOLDEN / "numerics.txt"
UPDATE = os.environ.get("BENCHDB_UPDATE_GOLDEN") == "1"

NODE = MachineInfo(
    hostname="golden01",
    cpu_model="Golden CPU 1000",
    sockets=1,
    cores=8,
    threads_per_core=1,
    numa_nodes=1,
    memory_bytes=32 << 30,
    caches=(
        CacheLevel(1, "Data", 32 << 10, 64, 8, (0,)),
        CacheLevel(2, "Unified", 1 << 20, 64, 16, (0,)),
        CacheLevel(3, "Unified", 16 << 20, 64, 16, tuple(range(8))),
    ),
    isa_flags=("avx2", "fma", "sse2"),
    os="Linux x86_64",
    kernel_release="6.1.0-golden",
    logical_cpus=8,
    source="described",
)
"""The machine every run was measured on: a described one, so its node class (the
``--machine`` every command names) is the same on every host."""

ENV = EnvironmentInfo(
    python="3.12.0",
    numpy="2.0.0",
    numba="0.60.0",
    llvmlite="0.43.0",
    scipy="1.14.0",
    mpi4py="4.0.0",
    threading_layer="workqueue",
    benchdb_version="0.0.0",
    git_commit=None,
    kernel_release="6.1.0-golden",
)
NEW_ENV = dataclasses.replace(ENV, numpy="2.1.0")
"""The software of the contender run ``compare`` checks: its environment difference is listed."""

SHALLOW = [f"shallow.{n}" for n in ("cu", "cv", "z", "h", "unew", "vnew", "pnew", "uold",
                                    "vold", "pold", "copy", "boundary")]  # fmt: skip
CURVE = step_curve()
START = datetime(2026, 1, 1)


@pytest.fixture(scope="module")
def golden_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixed database: a fitting sweep and a ``validation`` sweep of each shallow loop,
    and two runs of ``stream.triad`` (``base``, ``change``): the change is 20 % slower, 50 %
    at its third shape.  Every run starts at an hour of :data:`START`, not now."""
    path = tmp_path_factory.mktemp("golden") / "golden.sqlite"
    db = open_database(f"sqlite:///{path}")
    for kernel in SHALLOW:
        add_run(db, kernel, square_sizes(16, 2048, 12), CURVE, machine=NODE, environment=ENV,
                context="fullstep",
                scale_at={(362, 362): 0.8})  # fmt: skip
        add_run(db, kernel, square_sizes(24, 1500, 5), CURVE, machine=NODE, environment=ENV,
                context="fullstep",
                tags=["validation"])  # fmt: skip
    base = {("stream.triad", (n,)): [1e-6 * n * (1 + 0.01 * k) for k in range(-2, 3)]
            for n in (1000, 10_000, 100_000, 1_000_000)}  # fmt: skip
    change = {key: [t * (1.5 if key[1] == (100_000,) else 1.2) for t in samples]
              for key, samples in base.items()}  # fmt: skip
    rows.add_run(db, base, tags=["base"], machine=NODE, environment=ENV)
    rows.add_run(db, change, tags=["change"], machine=NODE, environment=NEW_ENV)
    with db.session() as s:  # the clock's times, printed by compare, made fixed
        for run in s.scalars(select(Run)):
            run.started_at = START + timedelta(hours=run.id)
            run.ended_at = run.started_at + timedelta(minutes=10)
    db.close()
    return path


@pytest.fixture
def golden_url(golden_file: Path, tmp_path: Path) -> str:
    """A copy of the fixed database for one command: ``predict`` stores the curve it fits,
    and the next command must not find it (nor its model id), whatever the tests' order."""
    path = tmp_path / golden_file.name
    shutil.copyfile(golden_file, path)
    return f"sqlite:///{path}"


METHODS = "linear,pchip,eq5,roofline,escape"
"""``validate``'s methods but logcurve: its fit is a search whose end moves with the last bit
of a BLAS call, which differs between CPUs (OpenBLAS picks its kernels by the CPU).  The
baselines (eq5, roofline, escape) are least-squares fits too: their last bits move the same
way, so the JSON, which prints every bit, checks the interpolations only; the table rounds."""

COMMANDS = {
    "predict.txt": ["predict", "-k", "shallow.cu", "-s", "100x100", "-s", "300x200",
                    "-s", "1500x1500", "-s", "4000x4000", "--iterations", "100"],
    "predict.json": ["predict", "-k", "shallow.z", "--range", "20x20:3000x3000:6",
                     "--method", "linear", "--json"],
    "validate.txt": ["validate", "-k", "shallow.cu,shallow.z", "-m", METHODS],
    "validate.json": ["validate", "-k", "shallow.h", "-m", "linear,pchip", "--json"],
    "compare.txt": ["compare", "base", "change", "--all"],
    "compare.json": ["compare", "base", "change", "--json"],
    "compare.md": ["compare", "base", "change", "--format", "markdown"],
    "scenario.txt": ["scenario", "--grid", "960x640", "--ranks", "1,2,4", "--steps", "10",
                     "--machine-file", "summit", "--single-process-curves", "--core-busy-w", "10"],
    "scenario.json": ["scenario", "--grid", "960x640", "--ranks", "2,4", "--steps", "10",
                      "--machine-file", "summit", "--single-process-curves", "--json"],
}  # fmt: skip
"""Each golden file and the command whose stdout it holds (``--machine`` is added)."""

EXIT = {"compare.txt": 1, "compare.json": 1, "compare.md": 1}
"""Exit status other than 0: ``compare`` finds the planted regression."""


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_output_is_byte_identical(golden_url: str, name: str) -> None:
    proc = benchdb(*COMMANDS[name], "--machine", NODE.hostname, env={"BENCHDB_URL": golden_url})
    assert proc.returncode == EXIT.get(name, 0), proc.stdout + proc.stderr
    expected = GOLDEN / name
    if UPDATE:
        expected.write_text(proc.stdout)
        NUMERICS.write_text(_numerics())
    if name.endswith(".json") and NUMERICS.read_text() != _numerics():
        # other numpy/scipy/pandas (the floors' run): the fits' last digits differ
        assert _rounded(json.loads(proc.stdout)) == _rounded(json.loads(expected.read_text()))
        return
    assert proc.stdout == expected.read_text(), f"{name}: stdout differs from {expected}"


def _numerics() -> str:
    """The versions of the libraries whose arithmetic the JSON files' full digits depend on."""
    return "".join(f"{m} {version(m)}\n" for m in ("numpy", "scipy", "pandas"))


def _rounded(value: object) -> object:
    """``value`` with every float rounded to 9 significant digits."""
    if isinstance(value, float):
        return float(f"{value:.9g}")
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value
