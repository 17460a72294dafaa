"""``benchdb ab``'s default trials: the CLI's default is the collector's, on three pairs."""

from __future__ import annotations

import inspect

from benchdb.collectors.ab.pairing import DEFAULT_TRIALS, MAX_DEFAULT_PROCESSES, choose_processes

from benchdb.cli.ab_cmd import ab


def test_the_cli_measures_the_collectors_default_trials() -> None:
    # the CLI's default is a literal (its module imports no collector before it runs)
    assert inspect.signature(ab).parameters["trials"].default == DEFAULT_TRIALS


def test_the_default_trials_take_turns_on_every_default_pair_of_workers() -> None:
    assert choose_processes(None, DEFAULT_TRIALS) == MAX_DEFAULT_PROCESSES
    assert DEFAULT_TRIALS % MAX_DEFAULT_PROCESSES == 0  # each pair runs as many trials
