"""The halo-exchange model (paper 001 eq. 8/10, paper 002 eq. 2-4) and machine files."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from benchdb.comm import halo_message_bytes, load_machine_file, predict_halo2d
from benchdb.comm.params import bundled_machines
from benchdb.comm.postal import PiecewisePostal, PostalRegime
from benchdb.errors import UserError


def test_message_sizes_come_from_the_local_block() -> None:
    # X sends the block's Y edge; Y runs after X and carries the corners
    assert halo_message_bytes((256, 128), halo=2, fields=3, word_bytes=8) == {
        "x": 128 * 2 * 3 * 8,
        "y": (256 + 4) * 2 * 3 * 8,
    }


def test_bundled_machine_files_load() -> None:
    names = {p.stem for p in bundled_machines()}
    assert {"summit", "lassen", "bridges", "alphaserver_es40", "bluegene_l"} <= names
    for path in bundled_machines():
        params = load_machine_file(path)
        for model in params.postal.values():
            assert model.regimes[-1].max_bytes is None


def test_bluegene_halo_is_two_phases_with_table_1_contention() -> None:
    """POP eq. 8 on Blue Gene/L: T = Σ_phases L_c(S) + C·S·β(S), C from Table 1."""
    bgl = load_machine_file("bluegene_l")
    pred = predict_halo2d(bgl, (32, 16), (6, 8), halo=2, fields=1)
    sx, sy = 8 * 2 * 8, (6 + 4) * 2 * 8  # 128 B (eager), 160 B (eager)
    cx, cy = bgl.contention[512]
    want = (3.91e-6 + cx * sx * 12.1e-9) + (3.91e-6 + cy * sy * 12.1e-9)
    assert pred.seconds == pytest.approx(want)
    assert [p.contention for p in pred.phases] == [1.0, 2.0]


def test_two_ranks_on_one_node() -> None:
    """2x1: both X neighbours are the other rank (C = 2 messages, each paying the
    intra-node alpha); Y is a local copy."""
    summit = load_machine_file("summit")
    pred = predict_halo2d(summit, (2, 1), (256, 256), fields=3, ranks_per_node=2)
    x, y = pred.phases
    r = summit.postal["intra-socket"].regime(x.message_bytes)
    assert x.contention == 2 and x.placement == "intra-socket"
    assert x.seconds == pytest.approx(2 * r.alpha + 2 * x.message_bytes * r.beta)
    assert y.seconds == 0 and y.model == "local copy"


def test_a_measured_sendrecv_fit_prices_intra_node_halo_messages() -> None:
    """With comm.exchange, each message of a rank costs one send-and-receive round."""
    summit = load_machine_file("summit")
    sendrecv = PiecewisePostal((PostalRegime("all", 0, None, 2.0e-6, 1.0e-10),))
    params = dataclasses.replace(summit, exchange={"intra-socket": sendrecv})
    x, y = predict_halo2d(params, (2, 1), (256, 256), fields=3, ranks_per_node=2).phases
    assert x.seconds == pytest.approx(2 * 2.0e-6 + 2 * x.message_bytes * 1.0e-10)
    assert x.model.startswith("exchange") and y.seconds == 0
    shift = predict_halo2d(params, (2, 1), (256, 256), ranks_per_node=2, shift=True).phases[0]
    assert shift.seconds == pytest.approx(2.0e-6 + shift.message_bytes * 1.0e-10)


def test_inter_node_messages_use_max_rate_with_the_k_model() -> None:
    summit = load_machine_file("summit")
    pred = predict_halo2d(summit, (8, 6), (1024, 1024), ranks_per_node=6)
    assert pred.k_model["k"] == 3.0
    x = pred.phases[0]
    assert x.k == 6.0  # the X phase alone: every message leaves the node
    mr = summit.maxrate_regime("inter-node", x.message_bytes)
    assert x.seconds == pytest.approx(mr.alpha + 2 * x.message_bytes * 6 / (mr.r_cb + 5 * mr.r_ci))


def test_missing_placement_is_a_user_error() -> None:
    with pytest.raises(UserError, match="no inter-node"):
        predict_halo2d(load_machine_file("alphaserver_es40"), (4, 2), (64, 64))


@pytest.mark.parametrize(
    ("name", "text", "needle"),
    [
        ("bad.toml", "name = [", "not valid TOML"),
        ("bad.json", "{", "not valid JSON"),
        ("empty.toml", 'name = "x"', "placements"),
        ("place.toml", "[placements.moon]\nregimes = []", "unknown placement"),
        (
            "neg.json",
            '{"placements": {"inter-node": {"regimes": [{"alpha": -1, "beta": 0}]}}}',
            "non-negative",
        ),
        (
            "order.toml",
            "[placements.inter-node]\nregimes = [{max_bytes = 64, alpha = 1e-6, beta = 0},"
            "{max_bytes = 32, alpha = 1e-6, beta = 0}, {alpha = 1e-6, beta = 0}]",
            "below the previous",
        ),
    ],
)
def test_malformed_machine_files(tmp_path: Path, name: str, text: str, needle: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(UserError, match=needle):
        load_machine_file(path)
