"""Test-only fault injection: prove that a failed rank writes nothing.

Set ``BENCHDB_COMM_TEST_FAULT=raise:R`` (rank R raises an exception) or
``kill:R`` (rank R kills itself with SIGKILL) and the benchmark job fails at
its first checkpoint, after the first measured point -- so a partial result
exists in memory and must not reach the database.  Not for production use.
"""

from __future__ import annotations

import os
import signal

ENV = "BENCHDB_COMM_TEST_FAULT"


class InjectedFault(RuntimeError):
    """The failure asked for by ``BENCHDB_COMM_TEST_FAULT``."""


def checkpoint(rank: int) -> None:
    spec = os.environ.get(ENV, "")
    if not spec:
        return
    action, _, target = spec.partition(":")
    if not target.isdigit() or int(target) != rank:
        return
    if action == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if action == "raise":
        raise InjectedFault(f"injected test fault ({ENV}={spec})")
