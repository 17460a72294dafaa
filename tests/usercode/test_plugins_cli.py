"""Numba plugins through the whole product, and every way a plugin is refused.

Refusals end before anything is stored: exit 2, one line, no database file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.clihelpers import assert_user_error, benchdb, invoke

from .plugins import plugin_file

SIZES = ["--sizes", "40x40,200x160,600x500", "--sample-time", "0.002", "--passes", "1"]


def test_a_plugin_file_is_verified_swept_and_predicted(tmp_path: Path, sqlite_url: str) -> None:
    plugin = plugin_file(tmp_path)
    result = invoke("collect", "--plugin", str(plugin), *SIZES, "--db", sqlite_url, "--json")
    assert result.exit_code == 0, result.output
    kernels = json.loads(result.stdout)["kernels"]
    assert [(k["kernel"], k["points"]) for k in kernels] == [("mine.smooth", 3)]
    listed = json.loads(invoke("kernels", "--db", sqlite_url, "--json").stdout)
    mine = next(k for k in listed if k["name"] == "mine.smooth")
    assert (mine["origin"], mine["points_here"], mine["flops_per_point"]) == ("plugin", 3, 4.0)
    proc = benchdb("predict", "-k", "mine.smooth", "-s", "300x200", "--method", "linear",
                   "--json", "--db", sqlite_url)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    [answer] = json.loads(proc.stdout)["predictions"]
    assert answer["points"] == 298 * 198 and answer["footprint_bytes"] == 2 * 300 * 200 * 8


@pytest.mark.parametrize(
    ("variant", "needle"),
    [
        ({"coefficient": "(c * 1.001)"}, "mine.smooth disagrees with its reference at 13x15"),
        ({"head": "import no_such_module\n"}, "failed to import: No module named"),
        ({"head": "def broken(:\n"}, "failed to import: SyntaxError"),
        ({"extra": "\n            print({'a': object()})"}, "plugin kernel mine.smooth failed"),
        ({"plugin": "stream"}, "already taken"),
    ],
)
def test_bad_plugins_are_refused_before_anything_is_stored(
    tmp_path: Path, variant: dict, needle: str
) -> None:
    plugin = plugin_file(tmp_path, **variant)
    target = tmp_path / "new.sqlite"
    proc = benchdb("collect", "--plugin", str(plugin), *SIZES, "--db", f"sqlite:///{target}")
    assert_user_error(proc, needle)
    assert not target.exists()


def test_a_module_without_kernels_or_a_missing_module_is_refused(tmp_path: Path) -> None:
    empty = tmp_path / "empty.py"
    empty.write_text("X = 1\n")
    target = tmp_path / "new.sqlite"
    proc = benchdb("collect", "--plugin", str(empty), "--db", f"sqlite:///{target}")
    assert_user_error(proc, "has no BENCHDB_KERNELS")
    proc = benchdb("collect", "--plugin", "no_such_plugin_module", "--db", f"sqlite:///{target}")
    assert_user_error(proc, "failed to import")
    assert not target.exists()
