"""Which layer answers a prediction, and validate's check of that whole answer path
against the repeat noise (issue 24, items 2 and 3)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from benchdb.predict import predict
from benchdb.predict.noise import (
    AgainstNoise,
    NoiseBasis,
    RepeatNoise,
    repeat_noise,
    retest_noise,
)
from benchdb.predict.validate import validate

from .synth import add_run, cli, log_linear, square_sizes, step_curve

KERNEL = "shallow.cu"  # rows along axis 0: a (2m, m/2) block has rows 2x a square's
SQUARES = square_sizes(8, 1500, 20)
LONG_ROWS = [(2 * m, m // 2) for m in (20, 60, 180, 540)]  # rectangles: the "long" side only
OWN_ROWS = [(70, 64), (70, 70), (70, 76)]  # 70x70 is bracketed by blocks of its own rows
D = 0.02  # the passes at t (1 - D) and t (1 + D): repeat noise (1 + D) / (1 - D) - 1
NOISE = (1 + D) / (1 - D) - 1


def test_each_answer_names_its_layer(sdb, sqlite_url: str, capsys) -> None:
    add_run(sdb, KERNEL, [*SQUARES, *LONG_ROWS, *OWN_ROWS[::2]], step_curve())
    df = predict(sdb, KERNEL, [(70, 70), (300, 75), (75, 300), (200, 200)], method="linear")
    assert df.layer.tolist() == ["same_rows", "aspect", "curve", "curve"]
    assert df.same_rows.tolist() == [True, False, False, False]
    assert df.aspect_extrapolated.tolist() == [False, False, True, False]  # no short-row data
    assert (df.method == "linear").all()  # the curve's method, whatever the layer
    proc = cli(capsys, "predict", "--db", sqlite_url, "-k", KERNEL, "-s", "300x75", "--json")
    assert proc.returncode == 0, proc.stderr
    assert [r["layer"] for r in json.loads(proc.stdout)["predictions"]] == ["aspect"]
    proc = cli(capsys, "predict", "--db", sqlite_url, "-k", KERNEL, "-s", "300x75")
    assert proc.returncode == 0 and "aspect: the square curve times" in proc.stdout


def test_repeat_noise_from_passes_else_sample_halves() -> None:
    two = {"samples": [1.0] * 5 + [1.1] * 5, "passes": 2}
    assert repeat_noise([two]) == RepeatNoise(pytest.approx(0.1), NoiseBasis.PASSES, 2)
    runs = [{"samples": [1.0] * 5, "passes": 1}, {"samples": [0.8] * 5, "passes": 1}]
    assert repeat_noise(runs).rel == pytest.approx(0.2)  # two runs are two repeats
    one = {"samples": [1.0, 1.0, 1.2, 1.2, 1.2], "passes": 1}
    assert repeat_noise([one]) == RepeatNoise(pytest.approx(0.2), NoiseBasis.SAMPLES, 2)
    assert repeat_noise([{"samples": [1.0], "passes": 1}]) is None
    against = AgainstNoise.of([2.0, -4.0, 6.0], [repeat_noise([two])] * 3)
    assert against.noise_median_pct == pytest.approx(10.0)
    assert against.ratio_median == pytest.approx(0.4) and against.basis == "passes"


def test_validate_reports_the_answer_path_error_beside_the_repeat_noise(sdb) -> None:
    off, noisy = SQUARES[8], SQUARES[12]
    add_run(
        sdb,
        "stencil2d5",
        SQUARES,
        log_linear,
        repeat=D,
        repeat_at={noisy: 0.2},
        scale_at={off: 1.25},  # 25 % faster than the curve: predicted 25 % too long
    )
    report = validate(sdb, kernels=["stencil2d5"], methods=["linear"])
    loo = report["results"][0]["loo"]
    assert loo["n"] == len(SQUARES) - 2 and loo["extrapolated_excluded"] == 2
    assert loo["layers"] == {"curve": len(SQUARES) - 2}
    worst = loo["worst"][0]
    assert worst["shape"] == "x".join(map(str, off)) and worst["layer"] == "curve"
    assert worst["error_pct"] == pytest.approx(25.0)
    assert worst["noise_pct"] == pytest.approx(100 * NOISE)
    noise = loo["noise"]
    assert noise["n"] == loo["n"] and noise["basis"] == "passes"
    assert noise["noise_median_pct"] == pytest.approx(100 * NOISE)
    assert noise["noise_p90_pct"] > 100 * NOISE  # the noisy point (1.2 / 0.8 - 1 = 50 %)
    assert noise["ratio_median"] == pytest.approx(loo["median_abs_pct"] / (100 * NOISE))
    assert noise["ratio_p90"] == pytest.approx(loo["p90_abs_pct"] / noise["noise_p90_pct"])
    untouched = [
        r for r in loo["worst"] if r["shape"] not in {"x".join(map(str, s)) for s in SQUARES[7:10]}
    ]
    assert all(abs(r["error_pct"]) < 1e-6 for r in untouched)  # linear is exact elsewhere


def test_validate_checks_the_layer_predict_would_use(sdb) -> None:
    add_run(sdb, KERNEL, [*SQUARES, *LONG_ROWS, *OWN_ROWS], step_curve(), repeat=D)
    check = add_run(sdb, KERNEL, [(302, 75), (70, 72)], step_curve(), tags=["validation"])
    report = validate(sdb, kernels=[KERNEL], methods=["pchip"])
    (result,) = report["results"]
    assert result["loo"]["layers"].keys() == {"same_rows", "aspect", "curve"}
    assert result["loo"]["noise"]["noise_median_pct"] == pytest.approx(100 * NOISE)
    assert result["check"]["layers"] == {"aspect": 1, "same_rows": 1}
    assert result["check"]["noise"]["basis"] == "samples"  # one pass each: its halves
    points = {p["shape"]: p for p in report["check_points"] if p["run_id"] == check}
    assert points["70x72"]["layer"] == "same_rows" and points["302x75"]["layer"] == "aspect"
    assert all(p["noise_pct"] is not None for p in points.values())


def test_validate_json_and_table_carry_the_noise(sdb, sqlite_url: str, capsys) -> None:
    add_run(sdb, "stencil2d5", SQUARES, log_linear, repeat=D)
    args = ("validate", "--db", sqlite_url, "-k", "stencil2d5", "-m", "linear")
    proc = cli(capsys, *args, "--json")
    assert proc.returncode == 0, proc.stderr
    (result,) = json.loads(proc.stdout)["results"]
    assert set(result["loo"]["noise"]) == {
        "n",
        "noise_median_pct",
        "noise_p90_pct",
        "ratio_median",
        "ratio_p90",
        "basis",
    }
    proc = cli(capsys, *args)
    assert proc.returncode == 0 and "leave-one-out over the answer path" in proc.stdout


def test_a_lookup_without_a_shape_answers_as_one_never_given_it(sdb) -> None:
    from dataclasses import replace

    from benchdb.predict.curve import build_curve
    from benchdb.predict.lookup import bare_lookup, prepare_lookup

    add_run(sdb, KERNEL, [*SQUARES, *LONG_ROWS, *OWN_ROWS], step_curve(), spread=0.05)
    full = prepare_lookup(sdb, KERNEL, method="pchip", store=False)
    queries = np.array([(70, 70), (70, 72), (300, 75), (200, 200)], dtype=float)
    for left_out in ("70x64", "70x70", "360x90", "218x218"):
        rows = tuple(r for r in full.selection.rows if r["shape_key"] != left_out)
        curve = build_curve(rows, full.basis.work_per_point, full.basis.geometry)
        fresh = bare_lookup(replace(full.selection, rows=rows), full.basis, curve, full.method)
        got, want = full.without({left_out}).evaluate(queries), fresh.evaluate(queries)
        assert list(got.layer) == list(want.layer), left_out
        np.testing.assert_allclose(got.rate, want.rate, rtol=1e-12)
        np.testing.assert_allclose(got.uncertainty_rel, want.uncertainty_rel, rtol=1e-12)


def test_retest_noise_is_between_collections_only() -> None:
    rows = [
        {"run_id": 3, "t_median": 1.2},
        {"run_id": 1, "t_median": 1.0},
        {"run_id": 2, "t_median": 1.1},
    ]
    got = retest_noise(rows)
    assert got is not None and got.basis is NoiseBasis.RUNS and got.repeats == 3
    assert got.rel == pytest.approx(np.median([0.1, 1.2 / 1.1 - 1]))  # in run order
    assert retest_noise(rows[:1]) is None  # passes of one run are not a retest
    two_rows_one_run = [{"run_id": 1, "t_median": 1.0}, {"run_id": 1, "t_median": 2.0}]
    assert retest_noise(two_rows_one_run) is None


def test_validate_reports_test_retest_when_check_shapes_were_collected_twice(
    sdb, sqlite_url: str, capsys
) -> None:
    odd = [(37, 37), (111, 111), (333, 333), (777, 777)]
    add_run(sdb, "stencil2d5", SQUARES, log_linear)
    add_run(sdb, "stencil2d5", odd, log_linear, tags=["validation"])
    add_run(sdb, "stencil2d5", odd, log_linear, tags=["validation"], scale_at={odd[1]: 1 / 1.1})
    report = validate(sdb, kernels=["stencil2d5"], methods=["linear"])
    check = report["results"][0]["check"]
    retest = check["retest"]
    assert retest["basis"] == "runs" and retest["n"] == check["n"] == 2 * len(odd)
    assert retest["noise_median_pct"] == pytest.approx(0.0, abs=1e-9)
    assert retest["noise_p90_pct"] == pytest.approx(10.0)  # 111x111 ran 1.1x longer
    assert report["results"][0]["loo"]["retest"]["n"] == 0  # the fit sweep ran once
    slow = [p for p in report["check_points"] if p["shape"] == "111x111"]
    assert [p["retest_pct"] for p in slow] == [pytest.approx(10.0)] * 2
    proc = cli(capsys, "validate", "--db", sqlite_url, "-k", "stencil2d5", "-m", "linear")
    assert proc.returncode == 0, proc.stderr
    assert "test-retest" in proc.stdout and "no point was measured in two" not in proc.stdout


def test_validate_says_how_to_see_the_test_retest_floor(sdb, sqlite_url: str, capsys) -> None:
    add_run(sdb, "stencil2d5", SQUARES, log_linear)
    proc = cli(capsys, "validate", "--db", sqlite_url, "-k", "stencil2d5", "-m", "linear,pchip")
    assert proc.returncode == 0, proc.stderr  # methods as a,b, as --kernel takes them
    assert "no point was measured in two collections" in " ".join(proc.stdout.split())
    assert "pchip" in proc.stdout
