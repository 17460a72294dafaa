"""The Fortran shallow-water example (examples/shallow_fortran), against the numpy model.

The example is built with its own Makefile in a temporary copy of its folder,
so the repository stays clean, and run at odd shapes.  Its checksums are the
sum of u, v and p (``state_checksum``) after the first step and after all
``1 + 2 reps`` steps; the numpy reference (``reference_run``) computes the
same model in the same loop order, so they agree to round-off.
"""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

import pytest
from benchdb.kernels.builtin.shallow import SHALLOW_KERNELS
from benchdb.kernels.builtin.shallow.model import reference_run
from benchdb.kernels.builtin.shallow.step import state_checksum
from benchdb.kernels.protocol import ProgramOutput, parse_output
from benchdb.kernels.spec import load_spec

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "shallow_fortran"
SPEC = EXAMPLE / "benchdb.toml"
SHAPES = [(16, 16), (33, 20), (7, 45)]
REPS = [1, 5, 50]

# The checksums are sums of about M x N values dominated by p (~5e4).  The
# Fortran code rounds differently from numpy (fused multiply-adds, another
# summation order), which moves them by a few 1e-15 relative at these shapes,
# after 1 step as after 101: the tolerances leave a factor of 300 for that.
# Wrong variants of the program (a wrong constant, index or sign in a loop, a
# wrong or missing periodic update, a missing copy) move the final checksum
# by 1e-9 and more at some of these runs, except a wrong index in z: the
# potential vorticity is tiny (~1e-11) and feeds back into u and v slowly, so
# it moves the checksum by about 1e-12 after 11 steps and 1e-11 after 101,
# hence the 50 repetitions.
FIRST_STEP_RTOL = 1e-12
FINAL_RTOL = 1e-12


def run(binary: Path, *args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(binary), *map(str, args)], capture_output=True, text=True, timeout=120
    )


def model_run(binary: Path, shape: tuple[int, int], reps: int) -> tuple[ProgramOutput, float]:
    """What one successful run reports (read with benchdb's parser), and its final_checksum."""
    done = run(binary, *shape, reps)
    assert done.returncode == 0, done.stderr
    (final,) = [line.split()[1] for line in done.stdout.splitlines() if "final_checksum" in line]
    return parse_output(done.stdout, declared_loops()), float(final)


def declared_loops() -> list[str]:
    with SPEC.open("rb") as f:
        return list(tomllib.load(f)["loops"])


@pytest.mark.parametrize("shape", SHAPES)
def test_checksum_is_the_state_after_the_first_step(binary, shape):
    first, _ = model_run(binary, shape, 1)
    again, _ = model_run(binary, shape, 5)
    assert again.checksum == first.checksum  # benchdb requires that it not depend on the reps
    expected = state_checksum(reference_run(shape, "float64", 1))
    assert first.checksum == pytest.approx(expected, rel=FIRST_STEP_RTOL)


@pytest.mark.parametrize("reps", REPS)
@pytest.mark.parametrize("shape", SHAPES)
def test_final_state_matches_numpy_reference(binary, shape, reps):
    _, final = model_run(binary, shape, reps)
    expected = state_checksum(reference_run(shape, "float64", 1 + 2 * reps))
    assert final == pytest.approx(expected, rel=FINAL_RTOL)


@pytest.mark.parametrize("reps", REPS)
@pytest.mark.parametrize("shape", SHAPES)
def test_every_declared_loop_is_timed_and_the_check_passes(binary, shape, reps):
    """The protocol parser refuses a missing, repeated, undeclared or negative time."""
    output, _ = model_run(binary, shape, reps)
    assert set(output.times) == set(declared_loops())
    assert output.checked and output.check_failed is None


def test_the_counts_are_paper_003_table_i_as_the_builtin_model_has_them():
    spec = load_spec(SPEC)
    assert spec.name == "shallowf90"
    builtin = {k.name.removeprefix("shallow."): k for k in SHALLOW_KERNELS}
    assert {loop.name for loop in spec.loops} == set(builtin)
    for loop in spec.loops:
        ref = builtin[loop.name]
        counts = (loop.flops, loop.loads, loop.stores)
        assert counts == (ref.flops_per_point, ref.loads_per_point, ref.stores_per_point)


@pytest.mark.parametrize(
    "args",
    [
        (),
        (16, 16),
        (16, 16, 1, 1),
        (16, 16, "x"),
        (16, 16, 1.5),
        (16, 16, 0),
        (-3, 16, 1),
        (16, "", 1),
        (99999999999, 16, 1),
    ],
    ids=repr,
)
def test_bad_arguments_exit_with_usage(binary, args):
    done = run(binary, *args)
    assert done.returncode != 0
    assert "usage: shallow M N REPS" in done.stderr
    assert "BENCHDB" not in done.stdout
