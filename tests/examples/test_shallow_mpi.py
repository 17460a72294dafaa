"""The MPI shallow-water example (examples/shallow_mpi): serial sweep mode and whole runs.

Built with its Makefile in a temporary copy (fixture ``mpi_example``) and run
as benchdb runs it.  A whole run on any decomposition gathers the final state
and sums it in the serial order, and its loops are the serial ones block by
block (one-sided periodic halo shifts, no fused multiply-adds), so its
checksum equals the serial sweep mode's bit for bit; both agree with the
numpy reference (``kernels/builtin/shallow/model.py``) to round-off.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from benchdb.kernels.builtin.shallow import SHALLOW_KERNELS
from benchdb.kernels.builtin.shallow.model import reference_run
from benchdb.kernels.builtin.shallow.step import state_checksum
from benchdb.kernels.program import tools_env
from benchdb.kernels.protocol import parse_output, parse_run_output
from benchdb.kernels.spec import load_spec

pytestmark = pytest.mark.mpi

SHAPE = (24, 18)
STEPS = 10  # whole-run steps after the first; the sweep's 2 x REPS
RTOL = 1e-12  # round-off against numpy, as tests/examples/test_shallow_fortran.py


def run(folder: Path, *args: object) -> str:
    done = subprocess.run(
        [*map(str, args)], cwd=folder, capture_output=True, text=True, timeout=120, env=tools_env()
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def sweep(folder: Path, shape: tuple[int, int], reps: int) -> tuple[float | None, float]:
    """The sweep mode's protocol checksum (after the first step) and final_checksum."""
    out = run(folder, "./shallow_mpi", *shape, reps)
    loops = [loop.name for loop in load_spec(folder / "benchdb.toml").loops]
    parsed = parse_output(out, loops)
    assert parsed.checked and parsed.check_failed is None
    (final,) = [float(ln.split()[1]) for ln in out.splitlines() if ln.startswith("final_checksum")]
    return parsed.checksum, final


def whole_run(folder: Path, px: int, py: int) -> float | None:
    ranks = px * py
    out = run(folder, "mpiexec", "-n", ranks, "./shallow_mpi", *SHAPE, STEPS, px, py)
    parsed = parse_run_output(out, ranks, ("total", "loops", "exchanges", "cpu"))
    assert parsed.checked and parsed.check_failed is None
    for part in parsed.parts:
        assert part["loops"] + part["exchanges"] <= part["total"] * 1.001
    return parsed.checksum


def test_sweep_mode_is_the_serial_model(mpi_example: Path) -> None:
    first, final = sweep(mpi_example, SHAPE, STEPS // 2)
    assert first == pytest.approx(state_checksum(reference_run(SHAPE, "float64", 1)), rel=RTOL)
    expected = state_checksum(reference_run(SHAPE, "float64", 1 + STEPS))
    assert final == pytest.approx(expected, rel=RTOL)


@pytest.mark.parametrize("decomp", [(1, 1), (2, 1), (1, 2)], ids=lambda d: f"{d[0]}x{d[1]}")
def test_a_whole_run_gives_the_serial_checksum_on_every_decomposition(
    mpi_example: Path, decomp: tuple[int, int]
) -> None:
    _, serial = sweep(mpi_example, SHAPE, STEPS // 2)
    assert whole_run(mpi_example, *decomp) == serial


def test_the_spec_declares_the_builtin_counts_and_a_parallel_run() -> None:
    spec = load_spec(Path(__file__).resolve().parents[2] / "examples/shallow_mpi/benchdb.toml")
    builtin = {k.name.removeprefix("shallow."): k for k in SHALLOW_KERNELS}
    for loop in spec.loops:
        ref = builtin[loop.name]
        assert (loop.flops, loop.loads, loop.stores) == (
            ref.flops_per_point, ref.loads_per_point, ref.stores_per_point,
        )  # fmt: skip
    assert spec.parallel is not None
    assert spec.parallel.halo.arrays == ("cu", "cv", "z", "h", "unew", "vnew", "pnew")
    assert set(spec.parallel.step) | set(spec.parallel.serial) == {
        loop.name for loop in spec.loops
    } - {"step"}
