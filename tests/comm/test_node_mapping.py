"""The node of each rank as the job measured it: the Slurm node name decides placement, and the
max-rate k and the K-model follow the measured rank-to-node mapping (paper 002 eq. 2-4)."""

from __future__ import annotations

import pandas as pd
import pytest
from benchdb.collectors.mpi.placement import RankInfo, classify, local_info, node_mapping
from benchdb.collectors.mpi.pointtopoint import per_node_senders
from benchdb.collectors.mpi.results import CommPoint

from benchdb.comm import load_machine_file
from benchdb.comm.halo_model import predict_halo2d
from benchdb.comm.maxrate import maxrate_time
from benchdb.comm.store import fit_frame
from benchdb.slurm.jobs import NODE_VAR


def test_the_slurm_node_name_is_the_node(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(NODE_VAR, "n7")
    assert local_info(0).node == "n7"
    monkeypatch.delenv(NODE_VAR)
    assert local_info(0).node  # MPI's processor name


def test_two_emulated_nodes_on_one_host_are_inter_node() -> None:
    a, b = RankInfo(0, "n1", (0,), (0,)), RankInfo(1, "n2", (0,), (0,))
    assert classify(a, b) == "inter-node"
    assert classify(a, RankInfo(1, "n1", (1,), (0,))) == "intra-socket"


def test_the_mapping_is_numbered_by_first_appearance() -> None:
    infos = [RankInfo(r, n, (r,), (0,)) for r, n in enumerate(["b", "a", "b", "a"])]
    assert node_mapping(infos) == [0, 1, 0, 1]  # round-robin (srun --distribution=cyclic)


def test_max_rate_k_counts_the_pair_ends_on_a_node() -> None:
    pairs = [(0, 2), (1, 3)]
    assert per_node_senders(pairs, [0, 0, 1, 1]) == 2  # block: both senders on node 0
    assert per_node_senders(pairs, [0, 1, 2, 3]) == 1  # one rank per node


def test_the_halo_k_model_takes_the_measured_mapping() -> None:
    """Choi et al.'s example (48 ranks, 8 nodes, 6x8, one column per node): k = 3 with
    blocks of 6; the same grid with ranks dealt round-robin over 8 nodes differs."""
    summit = load_machine_file("summit")
    block = predict_halo2d(summit, (8, 6), (1024, 1024), node_of=[r // 6 for r in range(48)])
    assert block.k_model["k"] == 3.0
    assert block.seconds == predict_halo2d(summit, (8, 6), (1024, 1024), ranks_per_node=6).seconds
    cyclic = predict_halo2d(summit, (8, 6), (1024, 1024), node_of=[r % 8 for r in range(48)])
    assert cyclic.k_model["k"] == 6.0 and cyclic.k_model["ranks_per_node"] == 6


def test_the_max_rate_fit_uses_k_per_node() -> None:
    """Pairs stored with their measured k per node are fitted with that k, not the pair count:
    points made with eq. 2 at k = 2 per node for 4 pairs give back its parameters."""
    alpha, r_cb, r_ci = 2e-6, 1e10, 4e9
    sizes = [2**i for i in range(10, 21)]

    def point(pairs: int, k: int, n: int) -> CommPoint:
        t = maxrate_time(n, k, alpha, r_cb, r_ci)
        params = {"k_per_node": k} if pairs > 1 else {}
        bench = "pairs" if pairs > 1 else "pingpong"
        return CommPoint(bench, 16, 4, pairs, "inter-node", n, f"k={pairs}", params, 10, [t] * 5)

    points = [point(1, 1, n) for n in sizes] + [point(4, 2, n) for n in sizes]
    frame = pd.DataFrame([p.to_dict() for p in points])
    (maxrate,) = [f for f in fit_frame(frame) if f.kind == "comm.maxrate"]
    assert maxrate.accuracy["k_values"] == [1, 2]
    fitted = [r for r in maxrate.params["regimes"] if r["form"] == "maxrate"]
    assert fitted and all(r["r_cb"] == pytest.approx(r_cb, rel=0.05) for r in fitted)
