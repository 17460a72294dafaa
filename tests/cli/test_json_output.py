"""``--json`` output: every command prints through ``print_json``, which must write NaN and
infinity, at any depth and as numpy values too, as null instead of failing."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import numpy as np

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
