"""``--json`` output: every command prints through ``print_json``, which must write NaN and
infinity, at any depth and as numpy values too, as null instead of failing."""

from __future__ import annotations

import ast
import json
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

import benchdb.cli
from benchdb.cli.common import print_json


def test_nan_and_infinity_anywhere_become_null(capsys) -> None:
    print_json(
        {
            "ratio": float("nan"),
            "rows": [{"ci": (1.0, float("inf"))}, {"p": np.float64("nan")}],
            "rates": np.array([1.5, np.nan, -np.inf]),
            "count": np.int64(3),
            "at": datetime(2026, 11, 23, tzinfo=UTC),
        }
    )
    doc = json.loads(capsys.readouterr().out)
    assert doc == {
        "ratio": None,
        "rows": [{"ci": [1.0, None]}, {"p": None}],
        "rates": [1.5, None, None],
        "count": 3,
        "at": "2026-11-23T00:00:00+00:00",
    }


def test_every_command_prints_its_json_through_print_json() -> None:
    """The NaN-to-null rule lives in print_json alone, so no command may serialise by itself:
    a module that offers --json must print with print_json (or emit, which calls it) and call
    no json.dump(s)."""
    cli = Path(benchdb.cli.__file__).parent
    for path in sorted(cli.glob("*.py")):
        if path.name == "common.py":
            continue
        tree = ast.parse(path.read_text())
        dumps = [
            node.lineno
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute)
            and node.attr in ("dump", "dumps")
            and isinstance(node.value, ast.Name)
            and node.value.id == "json"
        ]
        assert not dumps, f"{path.name}:{dumps} serialises JSON itself; use print_json"
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        if "JsonOption" in names:  # emit() is the table-or-JSON printer over print_json
            assert names & {"print_json", "emit"}, f"{path.name} offers --json, never print_json"
