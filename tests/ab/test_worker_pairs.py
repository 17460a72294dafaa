"""Several pairs of workers, each placed in memory its own way, alike on both sides.

Two processes of unchanged code can hold a point apart in every trial, through where
each put its code and data (docs/findings/ab-comparison.md); the trials of a point take
turns on pairs of workers started with different layouts, so they sample that too.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from benchdb.collectors.ab.pairing import choose_processes, measure_pair
from benchdb.collectors.ab.process import PAD_VARIABLE, environment_pads, layout_environment
from benchdb.collectors.ab.protocol import Side

from benchdb.errors import UserError


def _sides() -> list[Side]:
    return [Side("base", env={"A": "1"}), Side("change", env={"NUMBA_OPT": "0"})]


def test_a_layout_is_alike_on_both_sides_and_differs_from_the_next() -> None:
    sides = _sides()
    pads = environment_pads(sides)
    envs = [
        [layout_environment(s, p, layout) for s, p in zip(sides, pads, strict=True)]
        for layout in (0, 1)
    ]
    for base, change in envs:
        assert base["PYTHONHASHSEED"] == change["PYTHONHASHSEED"]
        assert sum(map(len, base.items())) == sum(map(len, change.items()))
    assert envs[0][0]["PYTHONHASHSEED"] != envs[1][0]["PYTHONHASHSEED"]
    assert len(envs[1][0][PAD_VARIABLE]) > len(envs[0][0][PAD_VARIABLE])
    assert envs[0][1]["NUMBA_OPT"] == "0"


def test_a_sides_own_hash_seed_wins() -> None:
    side = Side("change", env={"PYTHONHASHSEED": "42"})
    assert layout_environment(side, 0, 1)["PYTHONHASHSEED"] == "42"


CLEAN = {"wall_s": 0.01, "cpu_s": 0.01, "wait_s": 0.0, "nivcsw": 0, "steal_s": None, "lost_s": 0.0}


class _Worker:
    """The protocol as a worker answers it, recording which requests reached it."""

    def __init__(self, side: str, ops: list[tuple[int, str, str]], pair: int) -> None:
        self.side, self.ops, self.pair = side, ops, pair
        self._reply: dict[str, Any] = {}

    def send(self, op: str, **fields: Any) -> None:
        self.ops.append((self.pair, self.side, op))
        replies = {
            "prepare": {"checksum": 1.0, "placement": f"cpu {self.pair}"},
            "calibrate": {"repetitions": 10},
            "sample": {"times": {"k": 1e-3}, "evidence": CLEAN},
        }
        self._reply = replies.get(op, {})

    def receive(self) -> dict[str, Any]:
        return self._reply

    def ask(self, op: str, **fields: Any) -> dict[str, Any]:
        self.send(op, **fields)
        return self.receive()


def test_the_trials_of_a_point_take_turns_on_the_pairs() -> None:
    ops: list[tuple[int, str, str]] = []
    pairs = [{s: _Worker(s, ops, k) for s in ("base", "change")} for k in range(2)]
    timed = measure_pair(
        pairs, ["k", [8], "float64", 1], 5, "interleaved", np.random.default_rng(0), trials=3
    )  # type: ignore[arg-type]
    assert timed.failure is None and len(timed.trials) == 3
    prepared = [(pair, side) for pair, side, op in ops if op == "prepare"]
    assert prepared == [(k, side) for k in (0, 1, 0) for side in ("base", "change")]
    assert [pair for pair, side, op in ops if op == "calibrate"] == [0]  # one count for all
    assert {pair for pair, _, op in ops if op == "sample"} == {0, 1}


def test_processes_default_to_one_per_trial_at_most_three() -> None:
    assert choose_processes(None, 2) == 2
    assert choose_processes(None, 8) == 3
    assert choose_processes(1, 3) == 1
    with pytest.raises(UserError, match="--processes 4 is more than --trials 3"):
        choose_processes(4, 3)
