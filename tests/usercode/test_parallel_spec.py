"""The spec's [parallel] section: parsed from examples/shallow_mpi's spec, and bad input
refused in one line naming the fix, exit 2, before anything is built, run or stored."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest
from benchdb.kernels.api import KernelError
from benchdb.kernels.spec import load_spec

from benchdb.errors import UserError
from tests.clihelpers import assert_user_error, benchdb, invoke

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "shallow_mpi" / "benchdb.toml"
TEXT = EXAMPLE.read_text()


def spec_with(tmp_path: Path, old: str, new: str) -> Path:
    """The example's spec with ``old`` (a regular expression) replaced by ``new``."""
    text, count = re.subn(old, new, TEXT, count=1, flags=re.MULTILINE)
    assert count == 1, old
    path = tmp_path / "benchdb.toml"
    path.write_text(text)
    return path


BAD = [
    (r"^split = .*$", 'split = ["M", "K"]', "split names K, not among the extents"),
    (r"^split = .*$", "split = []", "split is empty"),
    (r"^step = .*$", 'step = ["cu", "nosuch"]', "step names nosuch, not among the declared"),
    (r"^serial = .*$", 'serial = ["cu"]', "in both step and serial"),
    (r'"\{py\}"\]', "]", "launch lacks {py}"),
    (r'"\{steps\}", ', "", "launch lacks {steps}"),
    (r'"\{M\}", "\{N\}", "\{steps\}"', '"{Q}", "{M}", "{N}", "{steps}"', "placeholder {Q} is unk"),
    (r"^reports = .*$", 'reports = ["loops"]', "lacks 'total'"),
    (r"^reports = .*$", 'reports = ["total", "comm"]', "reports names comm"),
    (r"^width = 1$", "width = 0", "width = 0 must be at least 1"),
    (r"^width = 1$", "width = 2", "but [footprint] halo says 1"),
    (r'^sides = "one".*$', 'sides = "left"', "sides = 'left'"),
    (r"^periodic = .*$", "periodic = [true]", "periodic must be true, false or two"),
    (r"^count = 0.*$", "count = -1", "count must be 0 or more"),
    (r"^\[parallel\.halo\]$", "colour = 1\n[parallel.halo]", "unknown field(s) colour"),
]


@pytest.mark.parametrize(("old", "new", "needle"), BAD, ids=[b[2] for b in BAD])
def test_a_bad_parallel_section_is_refused_naming_the_fix(
    tmp_path: Path, old: str, new: str, needle: str
) -> None:
    with pytest.raises(KernelError, match=re.escape(needle)):
        load_spec(spec_with(tmp_path, old, new))


def test_the_example_parses() -> None:
    par = load_spec(EXAMPLE).parallel
    assert par is not None
    assert par.split == ("M", "N") and par.serial == ("boundary",)
    assert par.halo.shift and par.halo.width == 1 and par.halo.periodic == (True, True)
    assert par.reports == ("total", "loops", "exchanges", "cpu")


CASE = ["--grid", "64x32", "--steps", "10"]


@pytest.mark.parametrize(
    ("command", "edit", "args", "needle"),
    [
        ("predict", BAD[0][:2], ["--decomp", "2x1"], "split names K"),
        ("predict", None, ["--decomp", "3x1"], "does not divide the grid 64x32"),
        ("run", None, ["--decomp", "2x1", "--diag-every", "5"], "--diag-every does not apply"),
        (
            "run",
            (r'^launch = \["mpiexec"', 'launch = ["no-such-mpiexec"'),
            ["--decomp", "2x1"],
            "launcher 'no-such-mpiexec'",
        ),
        ("run", (r"^split = .*$", 'split = ["N"]'), ["--decomp", "2x1"], "does not split M"),
    ],
)
def test_bad_input_to_app_commands_is_refused_and_creates_nothing(
    tmp_path: Path, command: str, edit: tuple[str, str] | None, args: list[str], needle: str
) -> None:
    spec = spec_with(tmp_path, *edit) if edit else EXAMPLE
    db = tmp_path / "never.db"
    result = invoke("app", command, "--program", str(spec), *CASE, *args, "--db", f"sqlite:///{db}")
    assert isinstance(result.exception, UserError), result.output
    assert needle in str(result.exception)
    assert not db.exists()


@pytest.mark.parametrize(
    ("spec", "args", "needle"),
    [
        ("fortran", [], "has no [parallel] section"),
        ("mpi", ["--near", "64x32"], "--near and --timeout do not apply to --program"),
        ("mpi", ["--ranks", "1"], "--ranks 1: a populated node needs 2 to"),
        ("mpi", ["--sizes", "0x5"], "has a zero"),
    ],
)
def test_bad_input_to_calibrate_a_program_is_refused_and_creates_nothing(
    tmp_path: Path, spec: str, args: list[str], needle: str
) -> None:
    path = EXAMPLE.parents[1] / "shallow_fortran" / "benchdb.toml" if spec == "fortran" else EXAMPLE
    db = tmp_path / "never.db"
    result = invoke("app", "calibrate", "--program", str(path), *args, "--db", f"sqlite:///{db}")
    assert isinstance(result.exception, UserError), result.output
    assert needle in str(result.exception)
    assert not db.exists()


@pytest.mark.parametrize(
    ("slurm", "args", "needle"),
    [
        ({}, ["--ranks-per-node", "1"], "only a Slurm allocation does: run `benchdb slurm "
         "calibrate --nodes 2 --ntasks-per-node 1 ...`"),
        ({"SLURM_JOB_ID": "7", "SLURM_JOB_NUM_NODES": "2", "SLURM_NTASKS_PER_NODE": "2"},
         ["--ranks-per-node", "1"], "this allocation places 2 ranks a node on 2 nodes, not 2 "
         "ranks 1 a node"),
    ],
)  # fmt: skip
def test_a_calibration_across_nodes_runs_only_in_an_allocation_placed_so(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    slurm: dict[str, str],
    args: list[str],
    needle: str,
) -> None:
    """Its runs are tagged with their ranks a node: that must be how they were placed."""
    for var in ("SLURM_JOB_ID", "SLURM_JOB_NUM_NODES", "SLURM_NTASKS_PER_NODE"):
        monkeypatch.delenv(var, raising=False)
    for var, value in slurm.items():
        monkeypatch.setenv(var, value)
    db = tmp_path / "never.db"
    result = invoke("app", "calibrate", "--program", str(EXAMPLE), *args, "--db", f"sqlite:///{db}")
    assert isinstance(result.exception, UserError), result.output
    assert needle in str(result.exception)
    assert not db.exists()


def test_a_spec_without_parallel_section_exits_2_in_one_line(tmp_path: Path) -> None:
    """The exit-2, one-line contract, through the real entry point."""
    fortran = EXAMPLE.parents[1] / "shallow_fortran" / "benchdb.toml"
    db = tmp_path / "never.db"
    proc = benchdb(
        "scenario", "--program", str(fortran), *CASE, "--ranks", "4", "--db", f"sqlite:///{db}"
    )
    assert_user_error(proc, "has no [parallel] section")
    assert not db.exists()


def test_a_programs_exchange_calibration_grids_fit_it_and_this_machine() -> None:
    """Square grids one octave apart in local footprint (the program's own bytes per
    point), every decomposition of 2 ranks, blocks the program accepts, runs that fit
    in memory."""
    from benchdb.collectors.app.program_exchanges import program_calibration_cases

    from benchdb.machine import available_memory_bytes, detect_machine

    spec = load_spec(EXAMPLE)
    cases = program_calibration_cases(spec, detect_machine(), 2, "float64")
    geometry = spec.layout.geometry()
    assert {c.decomp.key for c in cases} == {"2x1", "1x2"}
    for decomp in ("2x1", "1x2"):
        mine = [c for c in cases if c.decomp.key == decomp]
        local = [geometry.footprint_bytes(c.local, "float64") for c in mine]
        assert local == sorted(local) and all(b / a > 1.5 for a, b in itertools.pairwise(local))
    assert all(c.grid[0] == c.grid[1] and c.grid[0] % 2 == 0 for c in cases)
    assert all(min(c.local) >= spec.layout.min_extent for c in cases)
    free = available_memory_bytes()
    assert all(3 * geometry.footprint_bytes(c.grid, "float64") < free for c in cases)
