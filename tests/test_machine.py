"""The machine and environment fingerprints."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchdb.environment import detect_environment, git_commit
from benchdb.hashing import canonical_json, content_hash
from benchdb.machine import detect_machine, parse_cpu_list, parse_size, read_caches_sysfs


def test_caches_match_sysfs() -> None:
    """Every data cache level the kernel reports, with its true size."""
    root = Path("/sys/devices/system/cpu/cpu0/cache")
    if not root.exists():
        pytest.skip("no sysfs cache information on this machine")
    expected = {}
    for index in root.glob("index*"):
        level = (index / "level").read_text().strip()
        kind = (index / "type").read_text().strip()
        name = f"L{level}" + {"Data": "d", "Instruction": "i"}.get(kind, "")
        expected[name] = parse_size((index / "size").read_text())
    got = {c.name: c.size_bytes for c in detect_machine().caches}
    assert got == expected
    assert {"L1d", "L2"} <= set(got)


def test_sysfs_reader_on_a_fake_tree(tmp_path: Path) -> None:
    idx = tmp_path / "cpu0" / "cache" / "index0"
    idx.mkdir(parents=True)
    for name, value in {
        "level": "2",
        "type": "Unified",
        "size": "1024K",
        "coherency_line_size": "64",
        "ways_of_associativity": "16",
        "shared_cpu_list": "0-1,4",
    }.items():
        (idx / name).write_text(value + "\n")
    (cache,) = read_caches_sysfs(tmp_path)
    assert (cache.name, cache.size_bytes, cache.shared_cpus) == ("L2", 1 << 20, (0, 1, 4))


@pytest.mark.parametrize(
    ("text", "size"),
    [("32K", 32768), ("36608K", 36608 * 1024), ("2 MiB (2 instances)", 2 << 20), ("512", 512)],
)
def test_parse_size(text: str, size: int) -> None:
    assert parse_size(text) == size


def test_parse_cpu_list() -> None:
    assert parse_cpu_list("0-2,5") == (0, 1, 2, 5)


def test_fingerprints_are_deterministic_across_processes() -> None:
    code = (
        "from benchdb.machine import detect_machine;"
        "from benchdb.environment import detect_environment;"
        "print(detect_machine().fingerprint, detect_environment().fingerprint)"
    )
    out = {
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout
        for _ in range(2)
    }
    assert len(out) == 1
    assert out.pop().split() == [detect_machine().fingerprint, detect_environment().fingerprint]


def test_environment_does_not_import_numba() -> None:
    code = (
        "import sys; from benchdb.environment import detect_environment;"
        "detect_environment(); print('numba' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_environment_records_numba_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    base = detect_environment()
    monkeypatch.setenv("NUMBA_NUM_THREADS", "1")
    changed = detect_environment()
    assert changed.env_vars["NUMBA_NUM_THREADS"] == "1"
    assert changed.fingerprint != base.fingerprint


def test_canonical_json_is_order_independent() -> None:
    assert canonical_json({"b": 1, "a": [1.0, 2]}) == canonical_json({"a": [1.0, 2], "b": 1})
    assert content_hash({"x": 0.1}) == content_hash({"x": 0.1})
    assert json.loads(canonical_json({"x": float("nan")})) == {"x": "nan"}


def test_the_commit_is_benchdbs_own_never_an_enclosing_projects(tmp_path) -> None:
    """Installed into a virtualenv inside the user's repository, benchdb's package folder is
    in that repository: its commit is not benchdb's and must not enter the environment."""
    project = tmp_path / "project"
    site = project / ".venv" / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    git = ["git", "-C", str(project), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    (project / "model.f90").write_text("end\n")
    subprocess.run([*git, "add", "model.f90"], check=True)
    subprocess.run([*git, "commit", "-qm", "user's code"], check=True)
    assert git_commit(site) is None
    assert git_commit(project) is not None  # benchdb run from its own checkout: recorded
