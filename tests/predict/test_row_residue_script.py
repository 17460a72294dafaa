"""benchmarks/row_residue.py: bad input refused before anything is written; a small run."""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def residue(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    return importlib.import_module("row_residue")


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--family", "stream.copy"], "not a 2-D kernel with rows"),
        (["--family", "nope"], "unknown kernel 'nope'"),
        (["--width", "1"], "--width 1: give at least 2"),
        (["--bases", "0"], "--bases 0: give at least one"),
    ],
)
def test_bad_input_one_line_exit_2_nothing_written(residue, tmp_path, capsys, args, says) -> None:
    db = tmp_path / "r.sqlite"
    assert residue.main(["--db", f"sqlite:///{db}", *args]) == 2
    out = capsys.readouterr()
    assert out.out == "" and len(out.err.strip().splitlines()) == 1 and says in out.err
    assert not db.exists()


def test_an_existing_database_is_refused(residue, tmp_path, capsys) -> None:
    db = tmp_path / "r.sqlite"
    db.write_bytes(b"")
    assert residue.main(["--db", f"sqlite:///{db}"]) == 2
    assert "already exists" in capsys.readouterr().err


def test_siblings_grow_the_rows_one_element_at_a_time(residue) -> None:
    setup = residue.check(residue.parse_args(["--bases", "2", "--width", "4"]))
    base = setup.bases[0]  # shallow's rows run along axis 0
    assert setup.siblings(base) == [(base[0] + d, base[1]) for d in range(4)]
    assert setup.bases == residue.check(residue.parse_args(["--bases", "2"])).bases  # seeded


def test_a_small_run_prints_a_deviation_per_residue(residue, tmp_path, capsys) -> None:
    db = tmp_path / "r.sqlite"
    assert residue.main(["--db", f"sqlite:///{db}", "--bases", "1", "--width", "3"]) == 0
    out = capsys.readouterr().out
    mean = [float(x) for x in next(ln for ln in out.splitlines() if "mean %" in ln).split()[2:]]
    assert len(mean) == 3
    assert sum(mean) == pytest.approx(0, abs=0.2)  # a straight line's residuals
    lines = out.splitlines()
    start = lines.index("per kernel, mean over the bases") + 1
    rows = [ln.split() for ln in lines[start : start + len(residue.LOOPS["shallow"])]]
    per_kernel = {row[0]: [float(x) for x in row[1:]] for row in rows}
    assert set(per_kernel) == set(residue.LOOPS["shallow"])  # the ten update loops
    for values in per_kernel.values():
        assert len(values) == 3 and sum(values) == pytest.approx(0, abs=0.2)
    # the per-residue mean over kernels x bases is the mean of the per-kernel rows
    assert np.mean(list(per_kernel.values()), axis=0) == pytest.approx(mean, abs=0.06)
    # what no lookup between row lengths meets, over the ten loops' three residues;
    # with one base there is no other base to learn a pattern from
    reach = lines[lines.index(next(ln for ln in lines if ln.startswith("what a lookup"))) + 1]
    assert "between row lengths" in reach and "n= 30" in reach
    assert not any("less the other bases" in ln for ln in lines)


def test_beyond_reach_leaves_out_the_base_it_corrects(residue) -> None:
    """A pattern every base shares is all a residue layer needs; a base's own
    deviation, learned from no other base, stays."""
    pattern = np.array([0.04, -0.01, -0.03])
    dev = {("a", b): pattern.copy() for b in range(3)} | {("b", b): -pattern for b in range(3)}
    between, left = residue.beyond_reach(dev, ("a", "b"), 3)
    assert np.sort(np.abs(between)) == pytest.approx(np.sort(np.tile(np.abs(pattern), 6)))
    assert left == pytest.approx(np.zeros(18))
    dev[("a", 0)] = pattern + np.array([0.02, 0.0, -0.02])  # one base's own deviation
    _, left = residue.beyond_reach(dev, ("a", "b"), 3)
    # base 0 keeps its own 2 %; bases 1 and 2 see the mean over the others moved by 1 %
    assert left[:3] == pytest.approx([0.02, 0.0, -0.02])
    assert left[3:9] == pytest.approx([-0.01, 0.0, 0.01, -0.01, 0.0, 0.01])
    assert residue.beyond_reach(dev, ("a",), 1)[1].size == 0


def test_a_pass_left_without_a_clean_sample_leaves_the_rate_to_the_other(
    residue, tmp_path, capsys
) -> None:
    """Under load a point's second pass can keep no clean sample (the collector stores
    pass_counts [n, 0] and flags it disturbed): its rate is then the first pass's, not
    NaN, and the floor leaves it out."""
    import json
    import sqlite3

    db = tmp_path / "r.sqlite"
    setup = residue.check(residue.parse_args(["--db", f"sqlite:///{db}", "--bases", "1",
                                              "--width", "3"]))  # fmt: skip
    residue.measure(setup)
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT id, samples, pass_counts FROM measurement ORDER BY id")
        # a point whose passes both kept clean samples (under load some keep one only)
        mid, samples, counts = next(r for r in rows if min(json.loads(r[2])) > 0)
        first = json.loads(counts)[0]
        kept = json.loads(samples)[:first]
        con.execute(
            "UPDATE measurement SET samples = ?, pass_counts = ? WHERE id = ?",
            (json.dumps(kept), json.dumps([first, 0]), mid),
        )
    capsys.readouterr()
    residue.report(setup)
    out = capsys.readouterr().out
    mean = [float(x) for x in next(ln for ln in out.splitlines() if "mean %" in ln).split()[2:]]
    assert sum(mean) == pytest.approx(0, abs=0.2)
