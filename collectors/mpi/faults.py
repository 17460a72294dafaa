"""Test-only fault injection: prove that a failed rank loses nothing already measured.

Set ``BENCHDB_COMM_TEST_FAULT=raise:R`` (rank R raises an exception) or
``kill:R`` (rank R kills itself with SIGKILL) and the benchmark job fails at
its second checkpoint, after the second measured point.  The first point is
stored by then (rank 0 commits it before it takes part in measuring the
second), and the same job started again must neither measure nor store it a
second time.  Not for production use.
"""

from __future__ import annotations

import os
import signal

ENV = "BENCHDB_COMM_TEST_FAULT"


class InjectedFault(RuntimeError):
    """The failure asked for by ``BENCHDB_COMM_TEST_FAULT``."""


FIRES_AT = 2  # the checkpoint (1-based) at which the fault fires
_passed = [0]


def checkpoint(rank: int) -> None:
    spec = os.environ.get(ENV, "")
    if not spec:
        return
    action, _, target = spec.partition(":")
    if not target.isdigit() or int(target) != rank:
        return
    _passed[0] += 1
    if _passed[0] < FIRES_AT:
        return
    if action == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if action == "raise":
        raise InjectedFault(f"injected test fault ({ENV}={spec})")
