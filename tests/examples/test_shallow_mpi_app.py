"""A user's MPI program through the whole-run commands: swept quickly, predicted with the
time split into loops and exchanges, run for real and stored (examples/shallow_mpi)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchdb.errors import UserError
from tests.clihelpers import invoke

pytestmark = [pytest.mark.mpi, pytest.mark.slow]

SWEEP = ["--sizes", "16x16,32x32", "--passes", "1", "--quick", "--sample-time", "0.002"]
CASE = ["--grid", "32x32", "--steps", "10"]


@pytest.fixture(scope="module")
def swept(mpi_example: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The example's spec and a database holding a quick sweep of its loops."""
    url = f"sqlite:///{tmp_path_factory.mktemp('db') / 'mpi.db'}"
    spec = mpi_example / "benchdb.toml"
    done = invoke("collect", "--program", str(spec), *SWEEP, "--db", url)
    assert done.exit_code == 0, done.output
    return spec, url


def app(*args: str) -> dict:
    done = invoke("app", *args, "--json")
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)


def test_predict_splits_a_programs_run_into_loops_and_exchanges(swept: tuple[Path, str]) -> None:
    """Two ranks on a node run their loops beside each other: they are looked up in the
    curves of two copies at once, which `app calibrate --program` measures."""
    spec, url = swept
    predict = ["predict", "--program", str(spec), *CASE, "--decomp", "2x1",
               "--machine-file", "summit", "--db", url]  # fmt: skip
    missing = invoke("app", *predict)
    assert isinstance(missing.exception, UserError), missing.output
    assert f"benchdb app calibrate --program {spec} --ranks 2" in str(missing.exception)
    assert app(*predict, "--single-process-curves")["context"] == "program"
    calibrated = app("calibrate", "--program", str(spec), "--ranks", "2", *SWEEP[:2], "--quick",
                     "--no-exchanges", "--db", url)  # fmt: skip
    assert calibrated["context"] == "program:ppn2" and calibrated["point_passes"] >= 2
    two = app(*predict)
    step = ["cu", "cv", "z", "h", "unew", "vnew", "pnew", "uold", "vold", "pold", "copy"]
    assert set(two["loops_s"]) == {f"shallowmpi.{loop}" for loop in step}
    exchanged = step[:7]  # the fields the loops before each exchange updated
    assert set(two["exchanges_s"]) == {f"{f}.{ax}" for f in exchanged for ax in "xy"}
    assert two["local_shape"] == [16, 32] and two["context"] == "program:ppn2"
    assert two["exchange_source"] == "halo model" and two["exchange_s"] > 0
    assert two["total_s"] == pytest.approx(two["compute_s"] + two["exchange_s"])
    assert two["uncertainty_s"] >= 0 and two["compute_interpolation_s"] >= 0
    one = app("predict", "--program", str(spec), *CASE, "--decomp", "1x1", "--db", url)
    assert "shallowmpi.boundary" in one["loops_s"] and one["exchange_source"] == "none"


def test_app_run_stores_a_programs_run(swept: tuple[Path, str]) -> None:
    spec, url = swept
    runs = [
        app("run", "--program", str(spec), *CASE, "--decomp", d, "--db", url)
        for d in ("1x1", "2x1")
    ]
    for run, ranks in zip(runs, (1, 2), strict=True):
        assert run["application"] == "shallowmpi" and run["ranks"] == ranks
        assert run["total_s"] > 0 and len(run["rank_s"]) == ranks
        assert set(run["loops_s"]) == {"loops"} and set(run["exchanges_s"]) == {"exchanges"}
    assert runs[0]["mass"] == runs[1]["mass"]  # the final state's checksum: the serial one


def test_a_run_that_dies_on_its_ranks_writes_nothing(mpi_example: Path, tmp_path: Path) -> None:
    """The launch line swaps px and py: on 64x33 the program refuses 1 x 2 and exits 2."""
    spec = mpi_example / "dies.toml"
    text = (mpi_example / "benchdb.toml").read_text()
    spec.write_text(text.replace('"{px}", "{py}"]', '"{py}", "{px}"]'))
    db = tmp_path / "never.db"
    done = invoke("app", "run", "--program", str(spec), "--grid", "64x33", "--decomp", "2x1",
                  "--steps", "5", "--db", f"sqlite:///{db}")  # fmt: skip
    assert isinstance(done.exception, UserError), done.output
    assert "exit status 2" in str(done.exception) and "nothing was written" in str(done.exception)
    assert not db.exists()


def test_calibrated_exchanges_price_a_programs_run(swept: tuple[Path, str]) -> None:
    """The program's own runs time its exchanges (its ranks report them); the model then
    looks them up by the local block's footprint instead of pricing the messages alone."""
    from benchdb.collectors.app.exchanges import PASSES
    from benchdb.collectors.app.program_exchanges import calibrate_program_exchanges

    from benchdb.app.decomposition import Decomposition
    from benchdb.app.exchange_table import CALIBRATION_TAG
    from benchdb.app.model import AppCase, ExchangeSource, ModelOptions, predict_app
    from benchdb.app.program_app import load_program, program_application
    from benchdb.comm.params import load_machine_file
    from benchdb.db.app_runs import app_runs
    from benchdb.db.engine import open_database

    spec_path, url = swept
    spec = load_program(spec_path)
    cases = [AppCase((g, g), Decomposition(*d), 20) for d in ((2, 1), (1, 2)) for g in (16, 48)]
    db = open_database(url)
    try:
        assert calibrate_program_exchanges(db, spec, cases) == PASSES * len(cases)
        runs = app_runs(db, tag=CALIBRATION_TAG, application="shallowmpi")
    finally:
        db.close()
    assert len(runs) == PASSES * len(cases)
    assert all(set(r["exchanges_s"]) == {"exchanges"} for r in runs)
    case = AppCase((32, 32), Decomposition(2, 1), steps=100)
    db = open_database(url)
    try:  # the same model the CLI runs, with Summit's messages: measured exchanges win
        (two,) = predict_app(db, [case], load_machine_file("summit"),
                             ModelOptions(populated=False), program_application(spec))  # fmt: skip
    finally:
        db.close()
    assert two.exchange_source is ExchangeSource.MEASURED and set(two.exchanges) == {"exchanges"}
    assert two.exchange_s > 0 and two.untimed_s > 0

    # The same runs' loops against the curves at their blocks scale the run's loops: the
    # factor between the two calibrated 2x1 grids, linear in log local footprint.
    import numpy as np

    geometry, halo = spec.layout.geometry(), ModelOptions(populated=False, measured_exchanges=False)
    calibrated = [c for c in cases if c.decomp.key == "2x1"]
    db = open_database(url)
    try:
        curves = predict_app(
            db, [*calibrated, case], load_machine_file("summit"), halo, program_application(spec)
        )
    finally:
        db.close()
    ratios = []
    for cal, curve in zip(calibrated, curves[:-1], strict=True):
        mine = [r for r in runs if tuple(r["grid"]) == cal.grid and r["decomposition"] == "2x1"]
        in_run = sorted(r["loops_s"]["loops"] / r["steps"] for r in mine)[len(mine) // 2]
        ratios.append(np.log(in_run / (curve.compute_s / cal.steps)))
    footprint = [np.log(geometry.footprint_bytes(c.local, "float64")) for c in cases[:2]]
    at = np.log(geometry.footprint_bytes(case.local, "float64"))
    expected = float(np.exp(np.interp(at, footprint, ratios)))
    assert two.in_run_loop_factor == pytest.approx(expected)
    assert two.compute_s == pytest.approx(curves[-1].compute_s * expected)
    assert curves[-1].in_run_loop_factor == 1.0  # the halo model uses no calibration run

    # One rank a node: its messages cross nodes, which this node's runs did not time.
    db = open_database(url)
    try:
        (across,) = predict_app(db, [case], load_machine_file("summit"),
                                ModelOptions(populated=False, ranks_per_node=1),
                                program_application(spec))  # fmt: skip
    finally:
        db.close()
    assert across.exchange_source is ExchangeSource.HALO_MODEL and across.untimed_s == 0


def test_a_calibration_across_nodes_prices_only_runs_placed_alike(
    mpi_example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`benchdb slurm calibrate` runs `app calibrate --program --ranks-per-node R` in its
    allocation: its runs are tagged ppnR and price runs with R ranks a node (exchanges
    and in-run loops), and those alone.  Here the allocation is the environment Slurm
    gives a job of 2 nodes x 1 task, and the grids two small ones."""
    from benchdb.collectors.app import program_exchanges

    from benchdb.app.decomposition import Decomposition
    from benchdb.app.exchange_table import CALIBRATION_TAG
    from benchdb.app.model import AppCase, ExchangeSource, ModelOptions, predict_app
    from benchdb.app.program_app import load_program, program_application
    from benchdb.comm.params import load_machine_file
    from benchdb.db.engine import open_database

    spec, url = mpi_example / "benchdb.toml", f"sqlite:///{tmp_path / 'across.db'}"
    swept = invoke("collect", "--program", str(spec), *SWEEP, "--db", url)
    assert swept.exit_code == 0, swept.output
    small = [AppCase((g, g), Decomposition(*d), 20) for d in ((2, 1), (1, 2)) for g in (16, 48)]
    monkeypatch.setattr(program_exchanges, "calibration_cases",
                        lambda *a, **k: small)  # fmt: skip
    for var, value in {"SLURM_JOB_ID": "7", "SLURM_JOB_NUM_NODES": "2",
                       "SLURM_NTASKS_PER_NODE": "1"}.items():  # fmt: skip
        monkeypatch.setenv(var, value)
    done = app("calibrate", "--program", str(spec), "--ranks", "2", "--ranks-per-node", "1",
               "--db", url)  # fmt: skip
    assert done["exchange_calibration"] == {"cases": 4, "app_runs": 12, "ranks_per_node": 1}
    runs = [r for r in app_list(url) if CALIBRATION_TAG in r["tags"] and "ppn1" in r["tags"]]
    assert len(runs) == 12

    case = AppCase((32, 32), Decomposition(2, 1), steps=100)
    db = open_database(url)
    try:  # the model the CLI runs, with Summit's messages for the halo model
        across, one_node = (
            predict_app(db, [case], load_machine_file("summit"),
                        ModelOptions(populated=False, ranks_per_node=rpn),
                        program_application(load_program(spec)))[0]
            for rpn in (1, 2)
        )  # fmt: skip
    finally:
        db.close()
    assert across.exchange_source is ExchangeSource.MEASURED
    assert across.in_run_loop_factor != 1.0
    # no run had both ranks on one node: the halo model, the curves alone
    assert one_node.exchange_source is ExchangeSource.HALO_MODEL
    assert one_node.in_run_loop_factor == 1.0


def app_list(url: str) -> list[dict]:
    """Every stored app run's summary."""
    from benchdb.db.app_runs import app_runs
    from benchdb.db.engine import open_database

    db = open_database(url)
    try:
        return app_runs(db)
    finally:
        db.close()


def test_the_validation_script_measures_every_case_again_in_a_second_round(
    swept: tuple[Path, str],
) -> None:
    """benchmarks/program_validation.py --rounds 2 --drift: every case predicted once, run
    in two rounds, and each case's shift between the rounds printed beside its errors; in
    each round the swept square nearest each local block is measured again in the curves
    its case was predicted from."""
    spec, url = swept
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "program_validation.py"
    done = subprocess.run(
        [sys.executable, str(script), "--program", str(spec), "--db", url,
         "--grids", "24x24:10", "--decomps", "1x1,2x1", "--repeats", "1", "--rounds", "2",
         "--machine-file", "summit", "--drift", "--quick", "--json"],
        capture_output=True, text=True, check=False, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    cases = [(c["round"], c["decomposition"]) for c in out["cases"]]
    assert cases == [(1, "1x1"), (1, "2x1"), (2, "1x1"), (2, "2x1")]
    assert [(t["decomposition"], len(t["retest"]), len(t["errors"])) for t in out["retest"]] == [
        ("1x1", 1, 2),
        ("2x1", 1, 2),
    ]
    first, again = out["cases"][0], out["cases"][2]
    assert out["retest"][0]["retest"][0] == pytest.approx(
        again["measured_s"] / first["measured_s"] - 1
    )
    assert first["predicted_s"] == again["predicted_s"]  # predicted once, before any run
    # 24x24 (625 points with its halo) is nearest the swept 32x32, 12x24 (325) the 16x16
    nearest = {"1x1": "32x32", "2x1": "16x16"}
    wanted = {(nearest[c["decomposition"]], c["context"]) for c in out["cases"]}
    for round_ in (1, 2):
        drift = [d for d in out["drift"] if d["round"] == round_]
        assert {(d["square"], d["context"]) for d in drift} == wanted
        for d in drift:
            assert d["moved"] == pytest.approx(d["again_s"] / d["swept_s"] - 1)
