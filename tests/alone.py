"""Tests marked ``alone`` run with no other test beside them, on several workers too.

A test that judges timings (a disturbance probe, a detected slowdown) is decided by the
load beside it, and pytest-xdist's workers (``scripts/test.sh``) put another test there;
a test of the Slurm cluster would meet another's jobs in the queue.
Every test holds a shared room for its whole run -- set-up included, where a module
fixture may measure -- and an ``alone`` test holds all of it.  A plugin of its own so
that its test can load it into a pytest run of its own (``-p tests.alone``).
"""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def _turn(folder: Path, alone: bool) -> Iterator[None]:
    """Hold the workers' shared room, or all of it when ``alone``: a readers-writer lock
    over two files.  Whoever waits for the room holds the gate meanwhile, so a test
    waiting to run alone is not overtaken by the next tests of the other workers."""
    with open(folder / "gate.lock", "a") as gate, open(folder / "room.lock", "a") as room:
        fcntl.flock(gate, fcntl.LOCK_EX)
        try:
            fcntl.flock(room, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        finally:
            fcntl.flock(gate, fcntl.LOCK_UN)
        try:
            yield
        finally:
            fcntl.flock(room, fcntl.LOCK_UN)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Under xdist, every test holds the room: shared, or alone for an ``alone`` test."""
    if not hasattr(item.config, "workerinput"):  # one process: nothing runs beside it
        return (yield)
    folder = Path(item.config.option.basetemp).parent  # this run's, shared by its workers
    with _turn(folder, item.get_closest_marker("alone") is not None):
        return (yield)
