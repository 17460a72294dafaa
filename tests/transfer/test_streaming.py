"""Export and import stream: a round trip keeps every row, selections by run and date,
and an import killed midway leaves the database as it was (one transaction per file),
so that running it again completes it.

The source database holds a few synthetic runs (tests/predict/synth.py); the files of
the kill test are that run copied under new uuids, big enough for the import to
report progress before it is killed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import func, select, update

from benchdb.db.engine import open_database
from benchdb.db.models import Measurement, Run
from tests.clihelpers import benchdb, benchdb_command, invoke
from tests.collectors.dbcheck import counts
from tests.predict.synth import add_run, square_sizes, step_curve
from tests.transfer.files import Record, flat_rows, records, write_lines

OLD = datetime(2020, 1, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Three runs of two kernels; the first started in 2020."""
    url = f"sqlite:///{tmp_path_factory.mktemp('source') / 'runs.sqlite'}"
    db = open_database(url)
    first = add_run(db, "shallow.cu", square_sizes(32, 2048, 6), step_curve())
    add_run(db, "shallow.cv", square_sizes(32, 1024, 5), step_curve(), tags=["ci"])
    add_run(db, "shallow.cu", square_sizes(64, 4096, 4), step_curve(), threads=2)
    with db.session() as s:
        s.execute(update(Run).where(Run.id == first).values(started_at=OLD))
    db.close()
    return url


def _export(url: str, out: Path, *options: str) -> dict:
    result = invoke("export", "--out", str(out), "--db", url, "--json", *options)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _rows(path: Path) -> list:
    return records(path) if path.suffix == ".json" else flat_rows(path)


@pytest.mark.parametrize("fmt", ["json", "parquet", "csv"])
def test_a_round_trip_keeps_every_row(source: str, db_url: str, tmp_path: Path, fmt: str) -> None:
    """Export, import into an empty database (SQLite and PostgreSQL), export again: the
    two files hold the same rows (read back from the second backend too)."""
    first, second = tmp_path / f"first.{fmt}", tmp_path / f"second.{fmt}"
    assert _export(source, first)["runs"] == 3
    imported = invoke("import", str(first), "--db", db_url, "--json")
    assert imported.exit_code == 0, imported.output
    assert json.loads(imported.stdout)["measurements"] == 15
    _export(db_url, second)
    assert _rows(second) == _rows(first)
    # a host, an environment, two kernels, three runs and their 15 measurements
    assert len(_rows(first)) == (1 + 1 + 2 + 3 + 15 if fmt == "json" else 15)


def test_since_and_run_select_runs(source: str, tmp_path: Path) -> None:
    recent = tmp_path / "recent.json"
    assert _export(source, recent, "--since", "2021-01-01")["runs"] == 2
    runs = [rec for kind, rec in records(recent) if kind == "run"]
    assert [r["measurements"] for r in runs] == [5, 4]
    assert all(r["started_at"] >= "2021" for r in runs)
    one = _export(source, tmp_path / "one.json", "--since", "2021-01-01", "--run", "3")
    assert (one["runs"], one["measurements"]) == (1, 4)
    none = _export(source, tmp_path / "none.json", "--since", "2021-01-01", "--run", "1")
    assert (none["runs"], none["measurements"]) == (0, 0)
    assert records(tmp_path / "none.json") == []
    old = _export(source, tmp_path / "old.csv", "--since", "2019-12-31T23:00-02:00")
    assert old["runs"] == 2  # 2020-01-01 01:00 UTC: after the first run began


# ---------------------------------------------------------------- an import killed midway


def _copies(template: Path, path: Path, runs: int, prefix: str) -> int:
    """An export of ``runs`` copies of the one run in ``template``, each with a uuid of
    its own; how many measurements it holds."""
    items = records(template)
    (run,) = [rec for kind, rec in items if kind == "run"]
    points = [rec for kind, rec in items if kind == "measurement"]

    def copied() -> Iterator[Record]:
        yield from ((kind, rec) for kind, rec in items if kind not in ("run", "measurement"))
        for number in range(runs):
            key = f"{prefix}{number:024d}"
            yield "run", {**run, "uuid": key}
            for m in points:
                yield "measurement", {**m, "run_key": key}

    write_lines(path, copied())
    return runs * len(points)


def _killed_while_importing(path: Path, url: str) -> bool:
    """Start ``benchdb import``; SIGKILL it as soon as it reports writing (its first
    progress line of the writing pass).  Whether it was killed before it ended."""
    proc = subprocess.Popen(
        benchdb_command("import", str(path), "--db", url),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert proc.stderr is not None
    for line in proc.stderr:
        if line.startswith("importing:"):
            proc.send_signal(signal.SIGKILL)  # a process that already ended ignores it
            break
    proc.stderr.close()
    return proc.wait() == -signal.SIGKILL


def _points_per_run(url: str) -> list[int]:
    db = open_database(url)
    with db.reading() as s:
        found = s.execute(
            select(func.count(Measurement.id))
            .select_from(Run)
            .outerjoin(Measurement, Measurement.run_id == Run.id)
            .group_by(Run.id)
        ).scalars()
        per_run = list(found)
    db.close()
    return per_run


def test_an_import_killed_midway_leaves_the_database_as_it_was(
    source: str, db_url: str, tmp_path: Path
) -> None:
    """The database holds one run before; an import of many runs is killed while it
    writes: the database is as it was (no run, not even part of one, was added), and
    the same import run again adds every run whole.  The file grows until the import
    lasts long enough to be caught writing (a busy host makes it last longer, never
    fails the test)."""
    template = tmp_path / "template.json"
    _export(source, template, "--run", "2")
    assert invoke("import", str(template), "--db", db_url).exit_code == 0
    for attempt, runs in enumerate((1000, 4000, 16000)):
        big = tmp_path / f"big{attempt}.json"
        points = _copies(template, big, runs, prefix=f"attempt{attempt}")
        before = counts(db_url)
        if _killed_while_importing(big, db_url):
            break
    else:
        pytest.skip("every import ended before it reported writing: the host is too fast")
    assert counts(db_url) == before
    assert set(_points_per_run(db_url)) == {5}  # every run whole: the template's 5 points
    again = benchdb("import", str(big), "--db", db_url, "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["runs"] == runs
    after = counts(db_url)
    assert after["run"] == before["run"] + runs
    assert after["measurement"] == before["measurement"] + points
    assert set(_points_per_run(db_url)) == {5}
