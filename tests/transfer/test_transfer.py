"""``benchdb export`` / ``benchdb import``: round trips, idempotence, malformed files.

The source database holds a real (tiny) collection of the STREAM kernels.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from sqlalchemy import select

from benchdb.db.engine import open_database
from benchdb.db.measurements import measurements_frame
from benchdb.db.models import Machine, NodeClass, Run
from benchdb.errors import UserError
from tests.clihelpers import assert_user_error, benchdb, invoke
from tests.collectors.dbcheck import counts
from tests.transfer.files import document, records, write_lines

COMPARED = ["kernel", "shape_key", "footprint_bytes", "threads", "placement", "precision",
            "context", "repetitions", "samples", "t_min", "t_median", "t_iqr", "t_cv",
            "flop_rate", "byte_rate", "checksum", "valid", "flags", "evidence", "set_aside",
            "pass_counts"]  # fmt: skip


@pytest.fixture(scope="module")
def source_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('source') / 'node.sqlite'}"
    result = invoke(
        "collect", "--kernels", "stream.triad,stream.copy", "--footprints", "16KiB,1MiB",
        "--sample-time", "0.002", "--passes", "1", "--quiet", "--db", url,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return url


def _frame(url: str) -> pd.DataFrame:
    db = open_database(url)
    try:
        frame = measurements_frame(db)
    finally:
        db.close()
    return frame.sort_values(["kernel", "footprint_bytes"]).reset_index(drop=True)


def _import(source: str, url: str) -> dict:
    result = invoke("import", source, "--db", url, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize("fmt", ["csv", "parquet", "json"])
def test_export_then_import_twice_adds_one_copy(
    source_url: str, db_url: str, tmp_path: Path, fmt: str
) -> None:
    out = tmp_path / f"export.{fmt}"
    exported = invoke("export", "--out", str(out), "--db", source_url, "--json")
    assert exported.exit_code == 0, exported.output
    assert json.loads(exported.stdout)["measurements"] == 4

    first = _import(str(out), db_url)
    assert {k: first[k] for k in ("machines", "environments", "kernels", "runs")} == {
        "machines": 1, "environments": 1, "kernels": 2, "runs": 1
    }  # fmt: skip
    assert first["measurements"] == 4
    second = _import(str(out), db_url)
    assert second["measurements"] == 0 and second["runs"] == 0
    assert second["measurements_present"] == 4
    assert counts(db_url)["measurement"] == 4

    src, dst = _frame(source_url), _frame(db_url)
    pd.testing.assert_frame_equal(src[COMPARED], dst[COMPARED])
    # every sample's evidence travels with it
    for evidence, samples in zip(src["evidence"], src["samples"], strict=True):
        assert len(evidence["wall_s"]) == len(samples) > 0


def test_import_another_database_is_idempotent(source_url: str, db_url: str) -> None:
    assert _import(source_url, db_url)["measurements"] == 4
    sqlite_path = source_url.removeprefix("sqlite:///")
    again = _import(sqlite_path, db_url)  # a plain .sqlite path works too
    assert again["measurements"] == 0 and again["measurements_present"] == 4
    assert counts(db_url) == counts(source_url)


def test_export_filters_by_kernel(source_url: str, tmp_path: Path) -> None:
    out = tmp_path / "triad.json"
    result = invoke("export", "--out", str(out), "--kernel", "stream.triad", "--db", source_url)
    assert result.exit_code == 0, result.output
    measured = [rec for kind, rec in records(out) if kind == "measurement"]
    assert {m["kernel"] for m in measured} == {"stream.triad"}
    assert len(measured) == 2
    (run,) = [rec for kind, rec in records(out) if kind == "run"]
    assert run["measurements"] == 2  # what the file holds of it, not what the run measured


def _valid_json(source_url: str, tmp_path: Path) -> Path:
    out = tmp_path / "valid.json"
    assert invoke("export", "--out", str(out), "--db", source_url).exit_code == 0
    return out


def _malformed_files(source_url: str, tmp_path: Path) -> dict[str, Path]:
    valid = _valid_json(source_url, tmp_path)
    items = records(valid)
    text = valid.read_text().splitlines(keepends=True)
    files = {}

    def write(name: str, content: str) -> None:
        files[name] = tmp_path / name
        files[name].write_text(content)

    def changed(name: str, change: Callable[[list], object]) -> None:
        edited = json.loads(json.dumps(items))
        change(edited)
        files[name] = tmp_path / name
        write_lines(files[name], edited)

    write("garbage.json", "{not json")
    write("wrong-header.json", json.dumps({"format": "something-else", "version": 4}) + "\n")
    write("newer.json", json.dumps({"format": "benchdb-export", "version": 5}) + "\n")
    write("cut-short.json", "".join(text[:-3]))  # at a line's end: the end line is missing
    write("cut-mid-line.json", "".join(text)[:-200])
    write("not-a-record.json", "".join([text[0], "[1, 2]\n", *text[1:]]))
    write("old-document-newer.json", json.dumps({**document(valid, 3), "version": 9}))
    measurements = [i for i, (kind, _rec) in enumerate(items) if kind == "measurement"]
    changed("bad-value.json", lambda e: e[measurements[-1]][1].update(threads="many"))
    changed("missing-field.json", lambda e: e[measurements[0]][1].pop("samples"))
    changed("half-a-run.json", lambda e: e.pop(measurements[-1]))  # the run counts 4
    changed("no-run.json", lambda e: e[measurements[0]][1].update(run_key="elsewhere"))
    write("no-columns.csv", "a,b\n1,2\n")
    csv = tmp_path / "valid.csv"
    assert invoke("export", "--out", str(csv), "--db", source_url).exit_code == 0
    frame = pd.read_csv(csv, dtype=str, keep_default_na=False)
    frame.loc[frame.index[-1], "t_median"] = "fast"
    frame.to_csv(tmp_path / "bad-number.csv", index=False)
    files["bad-number.csv"] = tmp_path / "bad-number.csv"
    frame = pd.read_csv(csv, dtype=str, keep_default_na=False)
    frame.iloc[:-1].to_csv(tmp_path / "cut-short.csv", index=False)
    files["cut-short.csv"] = tmp_path / "cut-short.csv"
    parquet = tmp_path / "valid.parquet"
    assert invoke("export", "--out", str(parquet), "--db", source_url).exit_code == 0
    write("truncated.parquet", "")
    files["truncated.parquet"].write_bytes(parquet.read_bytes()[:200])
    return files


def test_malformed_files_are_refused_and_nothing_written(
    source_url: str, sqlite_url: str, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    files = _malformed_files(source_url, other)
    open_database(sqlite_url).close()
    before = counts(sqlite_url)
    for name, path in files.items():
        result = invoke("import", str(path), "--db", sqlite_url)
        assert isinstance(result.exception, UserError), (name, result.output)
        assert "not a valid benchdb export" in str(result.exception), name
        assert counts(sqlite_url) == before, name


def test_import_cli_errors_exit_2(tmp_path: Path, sqlite_url: str) -> None:
    junk = tmp_path / "junk.json"
    junk.write_text("[1, 2]")
    assert_user_error(benchdb("import", str(junk), "--db", sqlite_url), "not a valid")
    missing = benchdb("import", str(tmp_path / "nope.csv"), "--db", sqlite_url)
    assert_user_error(missing, "no such file")
    source = tmp_path / "elsewhere" / "missing.sqlite"  # as a URL: never created by reading
    absent = benchdb("import", f"sqlite:///{source}", "--db", sqlite_url)
    assert_user_error(absent, "no database at")
    assert not source.exists() and not source.parent.exists()
    notes = tmp_path / "notes.txt"
    notes.write_text("hello")
    result = invoke("import", str(notes), "--db", sqlite_url)
    assert isinstance(result.exception, UserError) and ".parquet" in str(result.exception)
    result = invoke("export", "--out", str(tmp_path / "x.xlsx"), "--db", sqlite_url)
    assert isinstance(result.exception, UserError) and "--format" in str(result.exception)
    bad_since = benchdb("export", "--out", str(tmp_path / "x.json"), "--since", "May", "--db",
                        sqlite_url)  # fmt: skip
    assert_user_error(bad_since, "--since 'May' is not a date")
    assert not (tmp_path / "x.json").exists()


def test_export_of_an_unknown_run_is_refused(source_url: str, tmp_path: Path) -> None:
    no_run = benchdb("export", "--out", str(tmp_path / "x.json"), "--run", "99", "--db", source_url)
    assert_user_error(no_run, "no run 99")
    assert not (tmp_path / "x.json").exists()


def test_export_never_replaces_a_file_unless_forced(source_url: str, tmp_path: Path) -> None:
    mine = tmp_path / "notes.json"
    mine.write_text("my notes")
    refused = benchdb("export", "--out", str(mine), "--db", source_url)
    assert_user_error(refused, "notes.json exists; choose another --out, or pass --force")
    assert mine.read_text() == "my notes"
    forced = invoke("export", "--out", str(mine), "--force", "--db", source_url)
    assert forced.exit_code == 0, forced.output
    assert len([r for r in records(mine) if r[0] == "measurement"]) == 4
    assert [p.name for p in tmp_path.iterdir()] == ["notes.json"]  # no temporary file left


def test_an_export_written_before_kernel_versions_still_imports(
    source_url: str, sqlite_url: str, tmp_path: Path
) -> None:
    """Format version 1 keyed kernels by name and had no versions: they are built-ins,
    versioned on import as migration 0004 versions the rows of an old database."""
    new = tmp_path / "new.json"
    assert invoke("export", "--out", str(new), "--db", source_url).exit_code == 0
    path = tmp_path / "old.json"
    path.write_text(json.dumps(document(new, 1)))
    assert _import(str(path), sqlite_url)["measurements"] == 4
    src, dst = _frame(source_url), _frame(sqlite_url)
    assert list(dst["kernel_version"]) == list(src["kernel_version"])


def test_an_export_of_version_3_still_imports(
    source_url: str, sqlite_url: str, tmp_path: Path
) -> None:
    """The JSON document and the flat table of format 3 (runs keyed by their key, no
    uuid column) bring the same rows, and the runs keep their uuids."""
    new = tmp_path / "new.json"
    assert invoke("export", "--out", str(new), "--db", source_url).exit_code == 0
    old = tmp_path / "old.json"
    old.write_text(json.dumps(document(new, 3), indent=1))  # as format 3 was written
    assert _import(str(old), sqlite_url)["runs"] == 1
    csv = tmp_path / "new.csv"
    assert invoke("export", "--out", str(csv), "--db", source_url).exit_code == 0
    frame = pd.read_csv(csv, dtype=str, keep_default_na=False)
    frame["export_format"] = "benchdb-export/3"
    run = json.loads(frame["run_record"][0])
    frame["run_record"] = json.dumps({k: v for k, v in run.items() if k != "uuid"})
    frame.to_csv(tmp_path / "old.csv", index=False)
    again = _import(str(tmp_path / "old.csv"), sqlite_url)
    assert again["runs"] == 0 and again["measurements_present"] == 4
    src, dst = _frame(source_url), _frame(sqlite_url)
    pd.testing.assert_frame_equal(src[COMPARED], dst[COMPARED])
    assert _uuids(sqlite_url) == _uuids(source_url) == [run["uuid"]]


def _uuids(url: str) -> list[str]:
    db = open_database(url)
    with db.reading() as s:
        found = list(s.scalars(select(Run.uuid).order_by(Run.id)))
    db.close()
    return found


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_an_import_keeps_node_classes_and_hosts(
    source_url: str, sqlite_url: str, tmp_path: Path, fmt: str
) -> None:
    """A host's record carries its node class: the database it lands in has the same
    class and host, by fingerprint."""
    out = tmp_path / f"export.{fmt}"
    assert invoke("export", "--out", str(out), "--db", source_url).exit_code == 0
    assert _import(str(out), sqlite_url)["node_classes"] == 1
    identity = select(Machine.hostname, Machine.fingerprint, NodeClass.fingerprint).join(NodeClass)
    found = []
    for url in (source_url, sqlite_url):
        db = open_database(url)
        with db.reading() as s:
            found.append(s.execute(identity).all())
        db.close()
    assert found[0] == found[1] and len(found[0]) == 1
    assert _import(str(out), sqlite_url)["node_classes"] == 0
