"""The papers' worked numbers, derived from their formulas and inputs."""

from __future__ import annotations

from fractions import Fraction

from benchdb.comm import POP_TEST, block_mapping, halo_messages, k_model, pop_events
from benchdb.comm.allreduce_model import tree_stages
from benchdb.comm.kmodel import neighbours


def test_kmodel_worked_example_48_ranks_on_8_nodes() -> None:
    """Choi et al. section 3.1: a 6x8 grid, one column of 6 ranks per node, periodic.

    As an MPI Cartesian grid of dims (8, 6) -- 8 columns, 6 ranks each -- ranks
    0-5 form the first column and fill the first node.
    """
    dims = (8, 6)
    node_of = block_mapping(48, 6)
    assert node_of[:6] == [0] * 6 and node_of[6] == 1
    km = k_model(halo_messages(dims), node_of)
    assert (km.k_prime, km.k_inter, km.k_total) == (6, 12, 24)
    assert km.k == 3.0


def test_kmodel_counts_each_node_and_takes_the_maximum() -> None:
    # non-periodic columns: a node's edge ranks send fewer intra-node messages
    msgs = halo_messages((8, 6), periodic=(True, False))
    km = k_model(msgs, block_mapping(48, 6))
    assert (km.k_prime, km.k_inter, km.k_total) == (6, 12, 22)
    assert km.k == 12 / 22 * 6


def test_cartesian_neighbours_follow_mpi_row_major_order() -> None:
    assert neighbours(0, (2, 1)) == {"x": [1, 1], "y": [0, 0]}
    assert neighbours(7, (4, 2)) == {"x": [5, 1], "y": [6, 6]}
    # a dimension of extent 1 is a local copy, not a message
    assert all(m.phase == "x" for m in halo_messages((2, 1)))


def test_pop_event_counts_for_the_test_input() -> None:
    """Kerbyson & Jones eq. 7 and 9 with Table 2's "test" input."""
    ev = pop_events(POP_TEST)
    assert ev.baroclinic_exchanges == 760
    assert ev.barotropic_exchanges == 1598
    assert ev.global_sums == 2918
    assert all(isinstance(v, Fraction) for v in (ev.barotropic_exchanges, ev.global_sums))


def test_global_sum_is_a_reduction_then_a_broadcast() -> None:
    assert [tree_stages(p) for p in (1, 2, 4, 5, 1024)] == [0, 2, 4, 6, 20]
