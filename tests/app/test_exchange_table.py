"""Measured halo exchanges: the calibration runs, the lookup table and the model's use of it."""

from __future__ import annotations

import math

import pytest
from benchdb.collectors.app.exchanges import PASSES, calibrate_exchanges, calibration_cases
from benchdb.kernels.builtin.shallow import SHALLOW

from benchdb.app.context import LoopContext
from benchdb.app.decomposition import Decomposition
from benchdb.app.exchange_table import (
    CALIBRATION_TAG,
    calibration_runs,
    measured_exchanges,
    ranks_per_node_of,
)
from benchdb.app.model import (
    AppCase,
    AppPrediction,
    ExchangeSource,
    ModelOptions,
    Scaling,
    predict_app,
)
from benchdb.comm.params import load_machine_file
from benchdb.db.app_runs import app_runs
from benchdb.db.engine import open_database
from benchdb.machine import detect_machine
from tests.clihelpers import benchdb

KEYS = [f"{f}.{a}" for f in ("cu", "cv", "z", "h", "unew", "vnew", "pnew") for a in "xy"]


def _summary(
    grid, decomp, per_exchange, *, steps=10, tags=(CALIBRATION_TAG,), run_id=1, untimed=1e-6
):
    """A run summary whose slowest rank spends ``untimed`` s a step outside the timers."""
    px, py = decomp
    return {
        "app_run_id": run_id,
        "grid": list(grid),
        "decomposition": f"{px}x{py}",
        "ranks": px * py,
        "steps": steps,
        "precision": "float64",
        "tags": list(tags),
        "exchanges_s": dict.fromkeys(KEYS, per_exchange * steps),
        "untimed_s": untimed * steps,
    }


def test_table_interpolates_in_log_log_and_flags_the_outside() -> None:
    runs = [
        _summary((40, 40), (2, 1), 1e-6),
        _summary((160, 160), (2, 1), 4e-6),
        _summary((160, 160), (2, 1), 5e-6),  # a second pass: the median of the two
        _summary((160, 160), (2, 1), 4.1e-6),
        _summary((80, 80), (2, 1), 9.0, tags=("app-validation",)),  # not calibration
        _summary((80, 80), (2, 2), 9.0),  # other rank count
    ]
    table = measured_exchanges(runs, 2, "float64")
    assert table is not None and table.covers(Decomposition(2, 1))
    assert not table.covers(Decomposition(1, 2))
    lo = math.log(SHALLOW.footprint_bytes((20, 40), "float64"))
    hi = math.log(SHALLOW.footprint_bytes((80, 160), "float64"))
    mid_local = (40, 80)
    u = math.log(SHALLOW.footprint_bytes(mid_local, "float64"))
    w = (u - lo) / (hi - lo)
    expected = math.exp((1 - w) * math.log(1e-6) + w * math.log(4.1e-6))
    per, outside = table.per_exchange(Decomposition(2, 1), mid_local)
    assert per["cu.x"] == pytest.approx(expected) and not outside
    per, outside = table.per_exchange(Decomposition(2, 1), (500, 1000))
    assert per["h.y"] == pytest.approx(4.1e-6) and outside
    assert measured_exchanges(runs, 3, "float64") is None


def test_runs_across_nodes_price_only_runs_placed_alike() -> None:
    """`slurm calibrate` tags its runs ppnR: a run across nodes (R a node) is priced
    from them, and a run on one node only from runs of all its ranks on one node."""
    one_node = _summary((40, 40), (2, 1), 1e-6, tags=(CALIBRATION_TAG, "ppn2"))
    untagged = _summary((160, 160), (2, 1), 2e-6)  # older calibrations: one node
    across = _summary((40, 40), (2, 1), 9e-6, tags=(CALIBRATION_TAG, "ppn1"))
    runs = [one_node, untagged, across]
    assert calibration_runs(runs, 2, "float64") == [one_node, untagged]
    assert calibration_runs(runs, 2, "float64", ranks_per_node=2) == [one_node, untagged]
    assert calibration_runs(runs, 2, "float64", ranks_per_node=1) == [across]
    assert calibration_runs(runs, 2, "float64", ranks_per_node=4) == [one_node, untagged]
    assert [ranks_per_node_of(r) for r in runs] == [2, 2, 1]
    table = measured_exchanges(runs, 2, "float64", ranks_per_node=1)
    assert table is not None
    per, _ = table.per_exchange(Decomposition(2, 1), (20, 40))
    assert per["cu.x"] == pytest.approx(9e-6)
    assert measured_exchanges([one_node], 2, "float64", ranks_per_node=1) is None


def test_time_outside_the_timers_is_its_own_series() -> None:
    runs = [
        _summary((40, 40), (2, 1), 1e-6, untimed=2e-6),
        _summary((160, 160), (2, 1), 4e-6, untimed=8e-6, steps=7),
    ]
    table = measured_exchanges(runs, 2, "float64")
    per, _ = table.per_exchange(Decomposition(2, 1), (20, 40))
    assert set(per) == set(KEYS)
    assert table.untimed(Decomposition(2, 1), (20, 40)) == pytest.approx(2e-6)
    assert table.untimed(Decomposition(2, 1), (80, 160)) == pytest.approx(8e-6)


def test_two_levels_of_exchange_cost_widen_the_prediction() -> None:
    # docs/findings/app-exchanges.md: a 2-rank step's exchanges cost 9.0-11 or 4.1-4.8 us
    bimodal = [9.5e-6] * 6 + [4.5e-6] * 3
    runs = [_summary((40, 40), (2, 1), x, run_id=i) for i, x in enumerate(bimodal)]
    runs += [_summary((160, 160), (2, 1), 4e-6, run_id=20 + i) for i in range(3)]
    table = measured_exchanges(runs, 2, "float64")
    assert table.spread(Decomposition(2, 1), (20, 40)) == pytest.approx(5 / 9.5)
    assert table.spread(Decomposition(2, 1), (80, 160)) < 1e-9
    assert "spread" not in table.per_exchange(Decomposition(2, 1), (20, 40))[0]
    case = AppCase((40, 40), Decomposition(2, 1), 10)
    pred = AppPrediction(
        case, {"shallow.cu": 2.0}, {"cu.x": 1.0}, 0.0, False, str(LoopContext(2)), [], {},
        ExchangeSource.MEASURED, loop_uncertainty={"shallow.cu": 0.1}, exchange_uncertainty_rel=0.5,
    )  # fmt: skip
    assert pred.uncertainty_s == pytest.approx(0.2 + 0.5)
    assert pred.to_dict()["exchange_uncertainty_s"] == pytest.approx(0.5)
    assert pred.to_dict()["context"] == "fullstep:ppn2"


def test_measured_exchanges_only_where_nothing_rules_them_out() -> None:
    """The one place that decides: --halo-model, another machine's parameters and a
    bandwidth or latency what-if each rule measured exchanges out; a compute one does not."""
    assert ModelOptions().uses_measured_exchanges
    assert ModelOptions(scaling=Scaling(compute=2.0)).uses_measured_exchanges
    for ruled_out in (
        ModelOptions(measured_exchanges=False),
        ModelOptions(other_machine=True),
        ModelOptions(scaling=Scaling(bandwidth=2.0)),
        ModelOptions(scaling=Scaling(latency=0.5)),
    ):
        assert not ruled_out.uses_measured_exchanges


def test_calibration_cases_span_the_caches_on_square_grids() -> None:
    machine = detect_machine()
    cases = calibration_cases(machine, 2, "float64")
    assert {c.decomp.key for c in cases} == {"1x2", "2x1"}
    for c in cases:
        assert c.grid[0] == c.grid[1] and c.grid[0] % 2 == 0 and c.steps >= 3
    local = [SHALLOW.footprint_bytes(c.local, "float64") for c in cases]
    assert min(local) < machine.data_caches()[0].size_bytes
    assert max(local) > 4 * machine.last_level_cache().size_bytes


@pytest.mark.mpi
def test_calibrated_exchanges_price_the_model(sqlite_url: str) -> None:
    proc = benchdb(
        "collect", "--kernels", "shallow", "--sizes", "8x8,24x24,48x48", "--quick", "--quiet",
        "--db", sqlite_url,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    db = open_database(sqlite_url)
    cases = [AppCase((g, g), Decomposition(*d), 20) for d in ((2, 1), (1, 2)) for g in (16, 48)]
    assert calibrate_exchanges(db, cases) == PASSES * len(cases)
    runs = app_runs(db, tag=CALIBRATION_TAG)
    assert len(runs) == PASSES * len(cases)
    assert all(set(r["exchanges_s"]) == set(KEYS) for r in runs)
    comm = load_machine_file("summit")
    case = AppCase((32, 32), Decomposition(2, 1), steps=100)
    options = ModelOptions(populated=False)
    measured = predict_app(db, [case], comm, options)[0]
    assert measured.comm["model"].startswith("measured")
    assert measured.exchange_source is ExchangeSource.MEASURED
    per, _ = measured_exchanges(runs, 2, "float64").per_exchange(case.decomp, case.local)
    assert measured.exchanges["z.x"] == pytest.approx(per["z.x"] * 100)
    untimed = measured_exchanges(runs, 2, "float64").untimed(case.decomp, case.local)
    assert measured.untimed_s == pytest.approx(untimed * 100) and untimed > 0
    timed = measured.compute_s + measured.exchange_s + measured.reduction_s
    assert measured.total_s == pytest.approx(timed + measured.untimed_s)
    for forced in (
        ModelOptions(populated=False, measured_exchanges=False),
        ModelOptions(populated=False, scaling=Scaling(latency=2.0)),
        ModelOptions(populated=False, other_machine=True),
    ):
        halo = predict_app(db, [case], comm, forced)[0]
        assert not halo.comm["model"].startswith("measured") and halo.untimed_s == 0
        assert halo.exchange_source is ExchangeSource.HALO_MODEL
    four = AppCase((32, 32), Decomposition(2, 2), steps=100)  # 4 ranks: not calibrated
    uncalibrated = predict_app(db, [four], comm, options)[0]
    assert not uncalibrated.comm["model"].startswith("measured")
    assert uncalibrated.exchange_source is ExchangeSource.HALO_MODEL
    db.close()


def test_the_halo_models_messages_are_what_the_distributed_model_sends() -> None:
    """One definition of the shallow halo message: the halo model's bytes per phase are the
    row (X) and the column (Y) of the arrays the exchange sends (collectors/app/staggered_halo.py:
    ``a.shape[1]`` elements, then ``a.shape[0]``), for every exchanged field."""
    from benchdb.collectors.app.instep import DistributedStepPoint

    from benchdb.app.shallow_app import EXCHANGED_FIELDS, HALO_WIDTH
    from benchdb.comm.halo_model import halo_message_bytes

    for block in [(30, 17), (64, 64), (9, 41)]:
        point = DistributedStepPoint(block, "float64")
        sizes = halo_message_bytes(block, HALO_WIDTH, 1, 8, shift=True)
        for name in EXCHANGED_FIELDS:
            a = getattr(point.model.state, name)
            assert sizes == {"x": a.shape[1] * a.itemsize, "y": a.shape[0] * a.itemsize}, name
        point.close()
