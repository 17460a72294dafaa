"""benchmarks/bad_inputs.py on a sample of its cases: one line, exit 2, no traceback,
nothing created or changed, for some cases of every group (the script runs them all)."""

from __future__ import annotations

import importlib
import os
from itertools import chain, zip_longest
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
SAMPLE = 40


@pytest.fixture
def bad_inputs(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    return importlib.import_module("bad_inputs")


@pytest.mark.slow  # 40 real processes
def test_a_sample_of_every_group_is_answered_in_one_line(bad_inputs, capsys) -> None:
    groups: dict[str, list] = {}
    for case in bad_inputs.all_cases():
        groups.setdefault(case.group, []).append(case)
    spread = [group[:: max(1, len(group) // 4)] for group in groups.values()]
    sample = [c for c in chain(*zip_longest(*spread)) if c is not None][:SAMPLE]
    assert len(sample) == SAMPLE and {c.group for c in sample} == set(groups)
    totals = bad_inputs.run_all(sample, jobs=min(4, os.cpu_count() or 1))
    assert totals["cases"] == SAMPLE
    assert totals["passed"] == SAMPLE, capsys.readouterr().out


def test_every_command_is_among_the_cases(bad_inputs) -> None:
    from benchdb.cli.app import COMMANDS

    covered = {case.args[0] for case in bad_inputs.all_cases()}
    assert set(COMMANDS) - {"slurm"} <= covered
    assert len(bad_inputs.all_cases()) >= 200
