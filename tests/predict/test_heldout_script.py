"""benchmarks/heldout.py refuses bad input in one line, exit 2, before writing anything."""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import pytest
from benchdb.collectors.plan import build_plan

from benchdb.machine import detect_machine
from benchdb.shapes import shape_key

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def heldout(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    return importlib.import_module("heldout")


def swept_shape() -> str:
    plan = build_plan(detect_machine(), kernels=["shallow"], quick=True)
    return shape_key(plan.points[len(plan.points) // 2].shape)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--shapes", "37x"], "is not like 600x400"),
        (["--shapes", "37x611x3"], "has 3 extent(s)"),
        (["--shapes", ","], "--shapes is empty"),
        (["--methods", "cubic"], "unknown method 'cubic'"),
        (["--kernels", "shallow.nope"], "--kernels shallow.nope: not in shallow"),
        (["--family", "nope"], "unknown kernel 'nope'"),
        (["--quick", "--shapes", "SWEPT"], "the sweep measures these itself"),
        (["--refine", "-5"], "--refine -5.0: give a number of seconds"),
    ],
)
def test_bad_input_one_line_exit_2_nothing_written(heldout, tmp_path, capsys, args, says) -> None:
    work = tmp_path / "work"
    args = [swept_shape() if a == "SWEPT" else a for a in args]
    assert heldout.main(["--workdir", str(work), *args]) == 2
    out = capsys.readouterr()
    assert out.out == "" and len(out.err.strip().splitlines()) == 1 and says in out.err
    assert not work.exists()


def test_a_workdir_holding_the_databases_is_refused(heldout, tmp_path, capsys) -> None:
    (tmp_path / "sweep.sqlite").write_bytes(b"")
    assert heldout.main(["--workdir", str(tmp_path), "--quick"]) == 2
    assert "already holds sweep.sqlite" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sweep.sqlite"]


def test_the_quick_check_runs_end_to_end_and_prints_every_floor(heldout, tmp_path, capsys) -> None:
    args = ["--quick", "--kernels", "shallow.cu", "--methods", "linear", "--shapes", "37x61"]
    assert heldout.main([*args, "--workdir", str(tmp_path / "w"), "--detail"]) == 0
    out = capsys.readouterr().out
    for what in ("| prediction, `linear` | 1 |", "| floor:", "| drift:", "| row step:"):
        assert what in out
    assert "| test-retest: the same points in a second collection | 1 |" in out
    against = out.split("| against the test-retest floor |")[1]
    assert "| prediction, `linear` | 1 |" in against
    assert "| row step predicted - measured, `linear` | 1 |" in out
    assert "37x61" in out.split("per shape")[1]
    # its row extent 37 is 5 mod 8: one shape there, and the one cell with an error
    table = out.split("error (signed) by row extent mod 8")[1].splitlines()[1:4]
    assert table[0].split() == ["shapes", "0", "0", "0", "0", "0", "1", "0", "0"]
    assert table[1].split() == ["kernel", *map(str, range(8))]
    cu = table[2][len("  ") + 16 :]
    cells = [cu[7 * r : 7 * r + 7].strip() for r in range(8)]
    assert table[2].split()[0] == "shallow.cu"
    assert [bool(c) for c in cells] == [r == 5 for r in range(8)]
    # the one shape's signed error: in size, the kernel table's median |error|
    median = next(ln for ln in out.splitlines() if ln.startswith("| shallow.cu `linear` |"))
    assert abs(float(cells[5])) == pytest.approx(float(median.split("|")[3].split()[0]), abs=0.051)


def test_the_row_step_rests_on_the_pass_left_where_the_other_kept_no_sample(
    heldout, tmp_path, monkeypatch
) -> None:
    # on a busy host a pass can lose every sample to the retake bound: its median is NaN
    setup = heldout.check(
        heldout.parse_args(["--quick", "--shapes", "37x61", "--workdir", str(tmp_path)])
    )
    passes = {(37, 61): (1.0, 1.0), (38, 61): (38 / 37 * 0.5, np.nan)}
    monkeypatch.setattr(
        heldout,
        "pass_times",
        lambda url, kernel, shapes: tuple(
            np.array(p) for p in zip(*map(passes.get, shapes), strict=True)
        ),
    )
    step = heldout._row_step(setup, {"heldout.sqlite": ""}, "shallow.cu")
    assert step == pytest.approx([1.0])  # twice the rate, from the first pass alone


def test_rows_2x_only_predicts_again_from_the_same_sweep(heldout, tmp_path, capsys) -> None:
    args = ["--quick", "--kernels", "shallow.cu", "--methods", "linear", "--shapes", "37x61"]
    assert heldout.main([*args, "--workdir", str(tmp_path / "w"), "--rows-2x-only"]) == 0
    out = capsys.readouterr().out
    assert "| prediction, `linear`, rows 2x only | 1 |" in out


def test_the_predicted_row_step_is_the_ratio_of_the_predicted_rates(heldout, tmp_path) -> None:
    args = ["--quick", "--kernels", "shallow.cu", "--shapes", "37x61,90x90"]
    setup = heldout.check(heldout.parse_args([*args, "--workdir", str(tmp_path / "w")]))
    assert setup.steps == ((38, 61), (91, 90))  # shallow's rows run along its first axis
    same_time = heldout._rate_ratio("shallow.cu", setup, np.ones(2), np.ones(2))
    # shallow's interior points are its extents' product: one more per row, 1/37 more work
    assert same_time == pytest.approx([38 / 37, 91 / 90])
    faster = heldout._rate_ratio("shallow.cu", setup, np.ones(2), np.array([1.0, 0.5]))
    assert faster[1] == pytest.approx(2 * 91 / 90)
    assert not (tmp_path / "w").exists()


def test_the_residue_table_gives_each_kernel_its_signed_median_per_residue(heldout) -> None:
    from heldout_common import by_residue

    extents = [3, 11, 19, 4, 5]  # residues 3, 3, 3, 4, 5 mod 8
    errors = {
        "k.fast": np.array([0.10, 0.12, np.nan, -0.02, -0.04]),
        "k.flat": np.array([-0.01, 0.01, 0.0, 0.0, 0.0]),
    }
    lines = by_residue(extents, errors, "pchip")
    assert lines[0] == "per kernel, median pchip error (signed) by row extent mod 8"
    assert lines[1].split() == ["shapes", "0", "0", "0", "3", "1", "1", "0", "0"]

    def cells(line: str) -> list[str]:
        body = line[2 + 16 :]
        return [body[7 * r : 7 * r + 7].strip() for r in range(8)]

    assert lines[3].split()[0] == "k.fast"
    assert cells(lines[3]) == ["", "", "", "+11.0", "-2.0", "-4.0", "", ""]  # NaN left out
    assert cells(lines[4]) == ["", "", "", "+0.0", "+0.0", "+0.0", "", ""]
