"""Commands pool the hosts of a node class; ``--host`` narrows them to one; bad names exit 2.

Hosts here are this machine's description under other node names (what the nodes of a
cluster, or this node after an OS update, report); runs are written through the ORM
(:func:`tests.regress.rows.add_run`) with known samples.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from benchdb.db.engine import Database
from benchdb.machine import MachineInfo, detect_machine
from tests.clihelpers import assert_user_error, benchdb, invoke
from tests.collectors.dbcheck import counts
from tests.regress.rows import add_run, other_machine

SAMPLES = [1.000e-3, 1.004e-3, 0.998e-3, 1.002e-3, 1.001e-3]


def host(name: str) -> MachineInfo:
    """This machine's hardware as node ``name`` reports it."""
    return dataclasses.replace(detect_machine(), hostname=name)


def updated(m: MachineInfo) -> MachineInfo:
    """``m`` after an OS and microcode update."""
    flags = tuple(sorted({*m.isa_flags, "md_clear", "flush_l1d"} - {"hle", "rtm"}))
    return dataclasses.replace(
        m, isa_flags=flags, memory_bytes=int(m.memory_bytes * 0.99), kernel_release="9.9.9"
    )


def triad(*sizes: int, scale: float = 1.0) -> dict:
    return {("stream.triad", (n,)): [x * scale * n / 1000 for x in SAMPLES] for n in sizes}


@pytest.fixture
def cluster(db_url: str, db: Database) -> str:
    """Runs 1-2 on node a (run 2 after an OS update), run 3 on node b of the same class,
    run 4 on a node of another class."""
    add_run(db, triad(1000, 4000), tags=["a1"], machine=host("a"))
    add_run(db, triad(1000, 4000), tags=["a2"], machine=updated(host("a")))
    add_run(db, triad(1000, 16000), tags=["b1"], machine=host("b"))
    add_run(db, triad(1000, 4000), tags=["x1"], machine=other_machine())
    return db_url


def _json(*args: str) -> dict | list:
    result = invoke(*args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _footprints(doc: dict) -> list[float]:
    return [p["footprint_bytes"] for p in doc["lookup"]["points"]]


def test_predict_pools_the_class_and_host_narrows(cluster: str) -> None:
    args = ["predict", "-k", "stream.triad", "-s", "2000", "--db", cluster]
    pooled = _json(*args)  # this machine's class: nodes a and b, before and after the update
    assert len(_footprints(pooled)) == 3
    assert pooled["lookup"]["host"] is None and pooled["lookup"]["host_count"] == 2
    only_a = _json(*args, "--host", "a")
    assert len(_footprints(only_a)) == 2 and only_a["lookup"]["host"] == "a"
    only_b = _json(*args, "--machine", "a", "--host", "b")
    assert only_b["lookup"]["points"][-1]["footprint_bytes"] > _footprints(only_a)[-1]
    elsewhere = _json(*args, "--machine", "elsewhere")
    assert elsewhere["lookup"]["node_class_id"] != pooled["lookup"]["node_class_id"]
    by_prefix = _json(*args, "--machine", pooled["lookup"]["node_class"][:8])
    assert _footprints(by_prefix) == _footprints(pooled)
    assert _json(*args, "--host", host("b").fingerprint[:8])["lookup"]["host"] == "b"


def test_compare_and_history_span_hosts_and_updates(cluster: str) -> None:
    """latest is node b's run, previous node a's after its update: one class, comparable."""
    doc = _json("compare", "previous", "latest", "--db", cluster)
    assert (doc["baseline"]["host"], doc["contender"]["host"]) == ("a", "b")
    doc = _json("compare", "previous", "latest", "--host", "a", "--db", cluster)
    assert (doc["baseline"]["run_id"], doc["contender"]["run_id"]) == (1, 2)
    history = _json("history", "-k", "stream.triad", "--shape", "1000", "--db", cluster)
    values = history["series"][0]["values"]
    assert [(v["run_id"], v["host"]) for v in values] == [(1, "a"), (2, "a"), (3, "b")]
    history = _json("history", "-k", "stream.triad", "--shape", "1000", "--host", "b",
                    "--db", cluster)  # fmt: skip
    assert [v["run_id"] for v in history["series"][0]["values"]] == [3]


def test_one_baseline_per_class(cluster: str) -> None:
    _json("baseline", "set", "a1", "--db", cluster)
    _json("baseline", "set", "x1", "--db", cluster)
    rows = _json("baseline", "show", "--db", cluster)
    assert [(r["run_id"], r["hostname"]) for r in rows] == [(1, "a"), (4, "elsewhere")]
    doc = _json("compare", "baseline", "latest", "--machine", "b", "--db", cluster)
    assert (doc["baseline"]["run_id"], doc["contender"]["run_id"]) == (1, 3)
    _json("baseline", "set", "b1", "--db", cluster)  # replaces the class's pin
    assert [r["run_id"] for r in _json("baseline", "show", "--host", "a", "--db", cluster)] == [3]


def test_runs_and_machine_list_name_classes_and_hosts(cluster: str) -> None:
    runs = _json("runs", "list", "--machine", "a", "--db", cluster)
    assert [(r["id"], r["hostname"]) for r in runs] == [(3, "b"), (2, "a"), (1, "a")]
    assert [r["id"] for r in _json("runs", "list", "--host", "b", "--db", cluster)] == [3]
    classes = _json("machine", "list", "--db", cluster)
    assert [[(h["host"], h["runs"]) for h in c["hosts"]] for c in classes] == [
        [("a", 2), ("b", 1)],
        [("elsewhere", 1)],
    ]
    assert classes[0]["fingerprint"] == detect_machine().node_class.fingerprint


BAD = [
    (["predict", "-k", "stream.triad", "-s", "100", "--host", "nope"], "no host 'nope'"),
    (["predict", "-k", "stream.triad", "-s", "100", "--machine", "99"], "no node class matches"),
    (
        ["predict", "-k", "stream.triad", "-s", "100", "--machine", "elsewhere", "--host", "a"],
        "no host 'a' in node class 2",
    ),
    (["compare", "baseline", "latest", "--host", "nope"], "no host 'nope'"),
    (["history", "-k", "stream.triad", "--host", "nope"], "no host 'nope'"),
    (["validate", "--host", "nope"], "no host 'nope'"),
    (["baseline", "set", "latest", "--host", "nope"], "no host 'nope'"),
    (["baseline", "set", "x1", "--host", "a"], "a baseline must be a run of its own class"),
    (["runs", "list", "--host", "nope"], "no host 'nope'"),
    (["measurements", "show", "--host", "nope"], "no host 'nope'"),
    (["kernels", "--host", "nope"], "no host 'nope'"),
    (["comm", "show", "--host", "nope"], "no host 'nope'"),
    (
        ["app", "predict", "--grid", "64x64", "--steps", "1", "--decomp", "1x1", "--host", "nope"],
        "no host 'nope'",
    ),
]


@pytest.mark.parametrize(("args", "needle"), BAD, ids=[" ".join(a[:2]) for a, _ in BAD])
def test_unknown_hosts_and_classes_exit_2(cluster: str, args: list[str], needle: str) -> None:
    before = counts(cluster)
    result = invoke(*args, "--db", cluster)
    assert result.exit_code != 0 and needle in str(result.exception), result.output
    assert counts(cluster) == before


def test_bad_host_through_the_console_script(cluster: str, tmp_path: Path) -> None:
    """One line naming the fix, exit 2; no export file, no report folder created."""
    before = counts(cluster)
    out = tmp_path / "x.json"
    assert_user_error(benchdb("export", "--out", str(out), "--host", "nope", "--db", cluster),
                      "`benchdb machine list` shows them all")  # fmt: skip
    assert_user_error(
        benchdb("report", "--out", str(tmp_path / "r"), "--host", "nope", "--db", cluster),
        "no host 'nope'",
    )
    assert not out.exists() and not (tmp_path / "r").exists()
    assert counts(cluster) == before


def test_machine_show_gives_class_and_slurm_node_name(sqlite_url: str) -> None:
    env = {"SLURMD_NODENAME": "n1"}
    shown = json.loads(benchdb("machine", "show", "--json", env=env).stdout)
    assert shown["host"] == "n1" and shown["hostname"] == "n1"
    assert shown["node_class"]["fingerprint"] == detect_machine().node_class.fingerprint
    assert "md_clear" not in shown["node_class"]["isa_features"]
    for name in ("n1", "n2", "n1"):
        assert benchdb("machine", "register", "--db", sqlite_url,
                       env={"SLURMD_NODENAME": name}).returncode == 0  # fmt: skip
    assert (counts(sqlite_url)["node_class"], counts(sqlite_url)["machine"]) == (1, 2)
