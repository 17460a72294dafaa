"""The application model on real (small) measurements, and the predict/scenario commands."""

from __future__ import annotations

import json

import pytest

from benchdb.app.decomposition import Decomposition
from benchdb.app.model import AppCase, ExchangeSource, ModelOptions, Scaling, predict_app
from benchdb.app.scenario import scenario_cases
from benchdb.comm.halo_model import predict_halo2d
from benchdb.comm.params import load_machine_file
from benchdb.db.engine import open_database
from benchdb.errors import UserError
from benchdb.predict import predict
from tests.clihelpers import assert_user_error, benchdb


@pytest.fixture(scope="module")
def measured_url(tmp_path_factory) -> str:
    """A database holding a real, small shallow sweep of this machine."""
    url = f"sqlite:///{tmp_path_factory.mktemp('app') / 'm.sqlite'}"
    proc = benchdb(
        "collect",
        "--kernels",
        "shallow",
        "--sizes",
        "8x8,24x24,48x48,96x96",
        "--quick",
        "--quiet",
        "--db",
        url,
    )
    assert proc.returncode == 0, proc.stderr
    return url


def test_model_is_the_sum_of_lookup_and_halo_terms(measured_url: str) -> None:
    db = open_database(measured_url)
    comm = load_machine_file("summit")
    case = AppCase((96, 64), Decomposition(2, 1), steps=10)
    options = ModelOptions(populated=False)
    pred = predict_app(db, [case], comm, options)[0]
    frames = {k: predict(db, k, [(48, 64)], iterations=10) for k in pred.loops}
    assert pred.loops["shallow.cu"] == pytest.approx(frames["shallow.cu"]["time_s"][0])
    # the loops' lookup spreads, added as moving together
    spread = sum(f["time_s"][0] * f["uncertainty_rel"][0] for f in frames.values())
    assert spread > 0 and pred.compute_uncertainty_s == pytest.approx(spread)
    assert pred.to_dict()["compute_uncertainty_s"] == pytest.approx(spread)
    # and their interpolation errors (leave-one-out at the bracketing sizes), likewise
    interp = sum(f["time_s"][0] * f["interpolation_rel"][0] for f in frames.values())
    assert interp > 0 and pred.compute_interpolation_s == pytest.approx(interp)
    halo = predict_halo2d(comm, (2, 1), (48, 64), ranks_per_node=2, shift=True)
    assert pred.exchange_s == pytest.approx(7 * 10 * halo.seconds)
    assert pred.total_s == pytest.approx(pred.compute_s + pred.exchange_s)
    faster = predict_app(
        db, [case], comm, ModelOptions(populated=False, scaling=Scaling(compute=2.0))
    )[0]
    assert faster.compute_s == pytest.approx(pred.compute_s / 2)
    overlapped = predict_app(db, [case], comm, ModelOptions(populated=False, overlap=True))[0]
    assert overlapped.total_s == pytest.approx(max(pred.compute_s, pred.exchange_s))
    single = predict_app(db, [AppCase((96, 64), Decomposition(1, 1), 10)], None, options)[0]
    assert "shallow.boundary" in single.loops and single.exchanges == {}
    assert pred.exchange_source is ExchangeSource.HALO_MODEL
    assert single.exchange_source is ExchangeSource.NONE
    db.close()


def test_populated_curves_missing_names_the_command(measured_url: str) -> None:
    db = open_database(measured_url)
    case = AppCase((96, 64), Decomposition(2, 1), steps=10)
    with pytest.raises(UserError, match="benchdb app calibrate --ranks 2"):
        predict_app(db, [case], load_machine_file("summit"), ModelOptions())
    db.close()


def test_scenario_ranks_and_cli(measured_url: str) -> None:
    assert [c.decomp.key for c in scenario_cases((96, 64), [2], 5, "float64")] == ["1x2", "2x1"]
    proc = benchdb(
        "scenario",
        "--grid",
        "96x64",
        "--ranks",
        "1,2,4",
        "--steps",
        "10",
        "--machine-file",
        "summit",
        "--single-process-curves",
        "--core-busy-w",
        "10",
        "--db",
        measured_url,
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
    assert sorted(r["total_s"] for r in rows) == [r["total_s"] for r in rows]
    assert {r["decomposition"] for r in rows} >= {"1x1", "2x1", "1x2", "2x2", "4x1"}
    assert all(r["energy"]["total_j"] > 0 for r in rows)


def test_predict_cli_json_and_errors(measured_url: str, sqlite_url: str) -> None:
    proc = benchdb(
        "app",
        "predict",
        "--grid",
        "96x64",
        "--decomp",
        "2x1",
        "--steps",
        "10",
        "--machine-file",
        "summit",
        "--single-process-curves",
        "--db",
        measured_url,
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["decomposition"] == "2x1" and len(out["exchanges_s"]) == 14
    assert set(out["loops_uncertainty_rel"]) == set(out["loops_s"])
    assert set(out["loops_interpolation_rel"]) == set(out["loops_s"])
    text = benchdb(*[a for a in proc.args[3:] if a != "--json"])
    assert text.returncode == 0, text.stderr
    assert "predicted total" in text.stderr and " spread ± " in text.stderr
    assert " interpolation" in text.stderr
    assert_user_error(
        benchdb("app", "predict", "--grid", "96x64", "--decomp", "5x1", "--db", measured_url),
        "does not divide",
    )
    assert_user_error(
        benchdb("scenario", "--grid", "97x97", "--ranks", "2", "--db", measured_url),
        "divides the grid",
    )
    benchdb("machine", "register", "--db", sqlite_url)
    assert_user_error(
        benchdb("app", "predict", "--grid", "96x64", "--decomp", "1x1", "--db", sqlite_url),
        "benchdb collect --kernels shallow",
    )
