"""``import`` holds every row to the rules ``collect`` keeps (benchdb/validity.py): a file
with one bad row is refused whole, the row named, before a database is opened; and rows an
older import let in are left out of predictions, never a crash."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from benchdb.db.engine import open_database
from tests.clihelpers import assert_user_error, benchdb
from tests.predict.synth import add_run, square_sizes, step_curve
from tests.transfer.files import Record, records, write_lines

BAD_ROWS = {
    "no samples": ({"samples": []}, "marked valid but has no samples"),
    "negative median": ({"t_median": -1}, "its median time is not a positive number"),
    "negative sample": ({"samples": [1e-3, -1e-3]}, "a time is negative"),
    "infinite sample": ({"samples": [1e-3, float("inf")]}, "samples are not a list of finite"),
    "zero extent": ({"shape": [0, 64]}, "shape [0, 64] is not a list of positive integers"),
    "no threads": ({"threads": 0}, "threads 0 is not a positive integer"),
    "negative rate": ({"flop_rate": -5.0}, "flop_rate -5.0 is not a positive number"),
}


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> list[Record]:
    folder = tmp_path_factory.mktemp("rules")
    db = open_database(f"sqlite:///{folder / 'source.sqlite'}")
    add_run(db, "shallow.cu", square_sizes(32, 2048, 6), step_curve())
    db.close()
    out = folder / "good.json"
    proc = benchdb("export", "--out", str(out), "--db", f"sqlite:///{folder / 'source.sqlite'}")
    assert proc.returncode == 0, proc.stderr
    return records(out)


def _measurements(items: list[Record]) -> list[dict]:
    return [rec for kind, rec in items if kind == "measurement"]


@pytest.mark.parametrize("bad", BAD_ROWS)
def test_a_file_with_a_bad_row_is_refused_whole(
    export: list[Record], tmp_path: Path, bad: str
) -> None:
    change, needle = BAD_ROWS[bad]
    items = json.loads(json.dumps(export))
    _measurements(items)[2].update(change)
    source = tmp_path / "bad.json"
    write_lines(source, items)  # inf as Infinity, as a hand-edited file may have
    target = tmp_path / "new" / "bench.sqlite"
    proc = benchdb("import", str(source), "--db", f"sqlite:///{target}")
    shape_key = _measurements(export)[2]["shape_key"]
    assert_user_error(proc, f"measurement 3 (shallow.cu {shape_key}")
    assert needle in proc.stderr and "nothing was imported" in proc.stderr
    assert not target.parent.exists()


def test_an_existing_database_is_left_as_it_was(export: list[Record], tmp_path: Path) -> None:
    target = tmp_path / "bench.sqlite"
    assert benchdb("machine", "register", "--db", f"sqlite:///{target}").returncode == 0
    before = hashlib.sha256(target.read_bytes()).hexdigest()
    items = json.loads(json.dumps(export))
    _measurements(items)[-1]["samples"] = []
    write_lines(tmp_path / "bad.json", items)
    proc = benchdb("import", str(tmp_path / "bad.json"), "--db", f"sqlite:///{target}")
    assert_user_error(proc, "has no samples")
    assert hashlib.sha256(target.read_bytes()).hexdigest() == before


def test_rows_an_older_import_stored_are_left_out_not_fatal(tmp_path: Path) -> None:
    target = tmp_path / "bench.sqlite"
    db = open_database(f"sqlite:///{target}")
    add_run(db, "shallow.cu", square_sizes(32, 2048, 8), step_curve())
    db.close()
    with sqlite3.connect(target) as conn:
        conn.execute("UPDATE measurement SET samples = '[]' WHERE id = 3")
        conn.execute("UPDATE measurement SET t_median = -1 WHERE id = 5")
    url = f"sqlite:///{target}"
    predicted = benchdb("predict", "-k", "shallow.cu", "-s", "100x100", "--db", url)
    assert predicted.returncode == 0, predicted.stderr
    assert "2 invalid measurement(s) left out" in predicted.stdout + predicted.stderr
    validated = benchdb("validate", "-k", "shallow.cu", "--db", url)
    assert validated.returncode == 0, validated.stderr


def test_a_sample_a_clock_read_too_slow_for_reads_zero_and_its_point_counts(
    tmp_path: Path,
) -> None:
    """A program's timer, less a clock read's cost, may read a loop shorter than a clock read
    as 0 s; ``collect`` keeps such a point valid by its positive median, and so does a
    prediction reading it (an earlier reader counted it invalid and had too few points)."""
    target = tmp_path / "bench.sqlite"
    db = open_database(f"sqlite:///{target}")
    add_run(db, "shallow.cu", square_sizes(32, 2048, 2), step_curve())
    db.close()
    with sqlite3.connect(target) as conn:
        (samples,) = conn.execute("SELECT samples FROM measurement WHERE id = 1").fetchone()
        zeroed = [0.0, *json.loads(samples)[1:]]
        conn.execute("UPDATE measurement SET samples = ? WHERE id = 1", (json.dumps(zeroed),))
    predicted = benchdb(
        "predict", "-k", "shallow.cu", "-s", "100x100", "--db", f"sqlite:///{target}"
    )
    assert predicted.returncode == 0, predicted.stderr
    assert "invalid" not in predicted.stdout + predicted.stderr
