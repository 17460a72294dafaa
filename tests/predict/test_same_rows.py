"""Blocks with the query's own rows answer it (benchdb.predict.same_rows)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from benchdb.predict import predict
from benchdb.predict.basis import rate_basis

from .synth import add_run, cli, square_sizes, step_curve

KERNEL = "shallow.cu"  # Fortran order: rows along axis 0
SQUARES = [s for s in square_sizes(8, 1500, 20) if s != (71, 71)]
ALIGNED = (71, 71)  # rows of whole cache lines: measured 15 % faster than its neighbours
BRACKETS = [(70, 64), (70, 76)]  # 70x70's rows, footprints -9 % and +8 %
FAST = 1.2


def _fp(shape: tuple[int, int]) -> float:
    return float(rate_basis(KERNEL).points_and_footprint(np.array([shape]))[1][0])


def test_own_row_brackets_answer_past_a_fast_block_of_other_rows(sdb) -> None:
    curve = step_curve()
    add_run(sdb, KERNEL, [*SQUARES, ALIGNED], curve, scale_at={ALIGNED: FAST})
    before = predict(sdb, KERNEL, [(70, 70)], method="pchip").iloc[0]
    assert not before.same_rows
    assert before.rate > 1.1 * curve(np.array([_fp((70, 70))]))[0]  # carried by 71x71

    add_run(sdb, KERNEL, BRACKETS, curve)
    after = predict(sdb, KERNEL, [(70, 70)], method="pchip").iloc[0]
    assert after.same_rows
    assert {after.lo_footprint_bytes, after.hi_footprint_bytes} == {_fp(b) for b in BRACKETS}
    assert after.rate == pytest.approx(curve(np.array([_fp((70, 70))]))[0], rel=0.01)
    assert after.uncertainty_rel == pytest.approx(0.02, rel=0.3)  # the brackets' spread


def test_a_measured_block_answers_itself_and_far_points_do_not(sdb) -> None:
    curve = step_curve()
    add_run(sdb, KERNEL, [*SQUARES, ALIGNED, *BRACKETS], curve, scale_at={ALIGNED: FAST})
    df = predict(sdb, KERNEL, [ALIGNED, (70, 100), (70, 60), (35, 70)], method="linear")
    assert df.same_rows.tolist() == [True, False, False, False]
    assert df.rate[0] == pytest.approx(FAST * curve(np.array([_fp(ALIGNED)]))[0])
    # 70x100 lies 31 % beyond 70x76 (reach 19 %); 70x60 has own-row points on one side only
    assert not df.extrapolated.any()


def test_predict_says_which_answers_rest_on_own_rows(sdb, sqlite_url: str, capsys) -> None:
    add_run(sdb, KERNEL, [*SQUARES, *BRACKETS], step_curve())
    args = ("predict", "--db", sqlite_url, "-k", KERNEL, "-s", "70x70", "-s", "200x200")
    proc = cli(capsys, *args, "--json")
    assert proc.returncode == 0, proc.stderr
    answers = json.loads(proc.stdout)["predictions"]
    assert [r["same_rows"] for r in answers] == [True, False]
    assert [r["layer"] for r in answers] == ["same_rows", "curve"]
    proc = cli(capsys, *args)
    assert proc.returncode == 0, proc.stdout
    assert "same_rows: measured blocks with these rows" in proc.stdout
