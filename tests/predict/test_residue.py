"""The row-residue correction: residue sets beside the square curve (benchdb.predict.residue)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchdb.predict import predict, residue
from benchdb.predict.basis import rate_basis
from benchdb.predict.curve import build_curve
from benchdb.predict.lookup import prepare_lookup

from .synth import add_run, cli, log_linear, square_sizes

SQUARES = square_sizes(8, 1500, 20)
WIDTH = 8
# stencil2d5 is C-ordered: rows run along the last axis.  Rows 4 mod 8 run 10 % faster,
# 7 mod 8 10 % slower, at every footprint.
PATTERN = {4: 1.10, 7: 0.90}
SET_BASES = (40, 120, 400)


def _set(n: int) -> list[tuple[int, int]]:
    return [(n, n + d) for d in range(WIDTH)]


def _planted(shapes: list[tuple[int, int]]) -> dict[tuple[int, int], float]:
    return {s: PATTERN[s[1] % WIDTH] for s in shapes if s[1] % WIDTH in PATTERN}


def _measure(sdb, shapes: list[tuple[int, int]]) -> None:
    add_run(sdb, "stencil2d5", shapes, log_linear, scale_at=_planted(shapes))


def _sets() -> list[tuple[int, int]]:
    return [s for n in SET_BASES for s in _set(n) if s not in SQUARES]


def test_a_planted_pattern_is_found_and_its_siblings_stay_out_of_the_curve(sdb) -> None:
    _measure(sdb, [*SQUARES, *_sets()])
    basis = rate_basis("stencil2d5")
    lookup = prepare_lookup(sdb, "stencil2d5", method="linear", store=False)
    sets = lookup.curve.residues
    assert sets.width == WIDTH and len(sets) == len(SET_BASES)
    assert sets.squares == tuple(f"{n}x{n}" for n in SET_BASES)
    assert not sets.siblings & {k for keys in lookup.curve.shapes for k in keys}
    mean = sum(np.log(list(PATTERN.values()))) / WIDTH
    for row in sets.deviation:  # detrended by the other squares' curve
        assert row[4] == pytest.approx(math.log(1.10) - mean, abs=0.01)
        assert row[7] == pytest.approx(math.log(0.90) - mean, abs=0.01)
        assert np.delete(row, [4, 7]) == pytest.approx(-mean, abs=0.01)
    # every square's rate is divided by its residue's factor: the curve is log-linear again
    expected = log_linear(lookup.curve.footprint) * math.exp(mean)
    assert lookup.curve.rate == pytest.approx(expected, rel=0.01)
    assert basis.geometry.contiguous_axis in (1, -1)


def test_answers_carry_their_residue_and_the_same_rows_are_their_own(sdb) -> None:
    _measure(sdb, [*SQUARES, *_sets()])
    query = [(250, 252), (250, 255), (250, 250), (40, 44)]  # 4 mod 8, 7 mod 8, 2, measured
    df = predict(sdb, "stencil2d5", query, method="linear")
    _, fp = rate_basis("stencil2d5").points_and_footprint(np.array(query))
    truth = log_linear(fp) * np.array([1.10, 0.90, 1.0, 1.10])
    assert df.rate.to_numpy()[:3] == pytest.approx(truth[:3], rel=0.02)
    assert df.residue_rel.to_numpy()[:2] == pytest.approx([0.10, -0.10], abs=0.02)
    assert df.layer[3] == "same_rows" and df.residue_rel[3] == 0
    assert df.rate[3] == pytest.approx(truth[3], rel=0.01)


def test_without_sets_nothing_changes(sdb) -> None:
    add_run(sdb, "stencil2d5", SQUARES, log_linear)
    df = predict(sdb, "stencil2d5", [(250, 252), (250, 255)], method="linear")
    _, fp = rate_basis("stencil2d5").points_and_footprint(np.array([(250, 252), (250, 255)]))
    assert (df.residue_rel == 0).all()
    assert df.rate.to_numpy() == pytest.approx(log_linear(fp), rel=0.01)
    lookup = prepare_lookup(sdb, "stencil2d5", method="linear", store=False)
    assert lookup.curve.residues is residue.NO_RESIDUES
    assert "residues" not in lookup.curve.fingerprint_data()


def test_runs_of_other_lengths_and_kernels_without_rows_make_no_sets() -> None:
    basis = rate_basis("stencil2d5")

    def rows(shapes):
        points, fp = basis.points_and_footprint(np.array(shapes))
        return [
            {
                "shape": list(s),
                "shape_key": "x".join(map(str, s)),
                "points": int(p),
                "footprint_bytes": int(f),
                "t_median": float(p) * 1e-9,
                "samples": [float(p) * 1e-9],
            }
            for s, p, f in zip(shapes, points, fp, strict=True)
        ]

    three = [(100, 100 + d) for d in range(3)]  # advise --pad 2: too short a run
    assert residue.find_sets(rows(three), basis.geometry, 1.0) is residue.NO_RESIDUES
    other_rows = [(100 + d, 100) for d in range(WIDTH)]  # consecutive along the wrong axis
    assert residue.find_sets(rows(other_rows), basis.geometry, 1.0) is residue.NO_RESIDUES
    both = rows([*_set(40), *_set(90), *[(300, 300 + d) for d in range(4)]])
    found = residue.find_sets(both, basis.geometry, 1.0)
    assert found.width == WIDTH and found.squares == ("40x40", "90x90")  # the 4-run left alone
    stream = rate_basis("stream.triad").geometry
    assert residue.find_sets(rows(three), stream, 1.0) is residue.NO_RESIDUES


def test_deviations_interpolate_in_footprint_hold_beyond_and_take_a_running_median() -> None:
    dev = np.array([[0.1, -0.1], [0.3, -0.3], [0.1, -0.1], [0.0, 0.0]])
    sets = residue.ResidueSets(
        0, 2, np.array([1.0, 2.0, 4.0, 8.0]), dev, ("a", "b", "c", "d"), frozenset()
    )
    smooth = sets.smoothed()  # the lone 0.3 is voted down by its neighbours
    assert smooth[:, 0] == pytest.approx([0.1, 0.1, 0.1, 0.0])
    u = np.log([0.5, 1.0, 2**2.5, 100.0])
    got = sets.log_factor(u, np.array([0, 1, 2, 3]))
    assert got == pytest.approx([0.1, -0.1, 0.05, 0.0])


def test_predict_shows_the_row_residue_and_its_json_the_sets(sdb, sqlite_url, capsys) -> None:
    _measure(sdb, [*SQUARES, *_sets()])
    out = cli(capsys, "--db", sqlite_url, "predict", "--kernel", "stencil2d5", "--shape", "250x252")
    assert out.returncode == 0, out.stderr
    assert "row residue" in out.stdout
    out = cli(
        capsys, "--db", sqlite_url, "predict", "--kernel", "stencil2d5", "--shape", "250x252",
        "--json",
    )  # fmt: skip
    import json

    data = json.loads(out.stdout)
    assert data["lookup"]["row_residues"]["width"] == WIDTH
    assert [s["square"] for s in data["lookup"]["row_residues"]["sets"]] == [
        "40x40",
        "120x120",
        "400x400",
    ]
    assert data["predictions"][0]["residue_rel"] == pytest.approx(0.10, abs=0.02)


def test_a_fit_stored_without_sets_is_redone_when_sets_arrive(sdb) -> None:
    _measure(sdb, SQUARES)
    first = prepare_lookup(sdb, "stencil2d5", method="linear")
    _measure(sdb, _sets())
    second = prepare_lookup(sdb, "stencil2d5", method="linear")
    assert second.model_id != first.model_id and not second.reused
    assert build_curve([], 1.0).residues is residue.NO_RESIDUES
