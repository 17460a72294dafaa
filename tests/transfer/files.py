"""Reading and writing export files in tests: the records of a JSON Lines export, the
rows of a flat one, and the JSON documents older benchdb versions wrote."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow.csv as pcsv
import pyarrow.parquet as pq

from benchdb.db.transfer_records import kernel_key

Record = tuple[str, dict[str, Any]]


def lines(path: Path) -> list[dict[str, Any]]:
    """Every line of a JSON Lines export, parsed: the header, the records, the end line."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def records(path: Path) -> list[Record]:
    """The records of a JSON Lines export, in order (no header, no end line)."""
    parsed = lines(path)
    assert parsed[0] == {"format": "benchdb-export", "version": 4}
    assert set(parsed[-1]) == {"end"}
    return [next(iter(item.items())) for item in parsed[1:-1]]


def write_lines(path: Path, items: Iterable[Record]) -> None:
    """A JSON Lines export of ``items``, with the header and the end line that counts them."""
    held = {"run": 0, "measurement": 0}
    with path.open("w") as out:
        out.write(json.dumps({"format": "benchdb-export", "version": 4}) + "\n")
        for kind, rec in items:
            held[kind] = held.get(kind, 0) + 1
            out.write(json.dumps({kind: rec}) + "\n")
        end = {"runs": held["run"], "measurements": held["measurement"]}
        out.write(json.dumps({"end": end}) + "\n")


def flat_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a CSV or Parquet export, as pyarrow reads them."""
    table = pq.read_table(path) if path.suffix == ".parquet" else pcsv.read_csv(path)
    return table.to_pylist()


def document(path: Path, version: int) -> dict[str, Any]:
    """The JSON document benchdb wrote as format ``version`` (1 to 3) for the export at
    ``path``: entities keyed by natural key, runs by their key without a uuid column;
    version 1 keyed kernels by name, had no kernel versions and no run counts."""
    groups = ("machines", "environments", "runs", "kernels")
    doc: dict[str, Any] = {"format": "benchdb-export", "version": version, "measurements": []}
    doc.update({group: {} for group in groups})
    for kind, rec in records(path):
        if kind == "run":
            rest = {k: v for k, v in rec.items() if k not in ("uuid", "samples_pruned_at")}
            doc["runs"][rec["uuid"]] = {k: v for k, v in rest.items() if k != "measurements"}
        elif kind == "kernel" and version == 1:
            doc["kernels"][rec["name"]] = {
                k: v for k, v in rec.items() if k not in ("version", "origin")
            }
        elif kind == "kernel":
            doc["kernels"][kernel_key(rec)] = rec
        elif kind == "measurement":
            drop = ("kernel_version",) if version == 1 else ()
            doc["measurements"].append({k: v for k, v in rec.items() if k not in drop})
        else:
            doc[f"{kind}s"][rec["fingerprint"]] = rec
    return doc
