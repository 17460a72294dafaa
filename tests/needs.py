"""A test whose service or tool is missing: skipped, with the reason, unless CI demands it.

CI sets a switch per dependency (``BENCHDB_REQUIRE_POSTGRES=1``, ``BENCHDB_REQUIRE_MPI=1``)
so that a missing PostgreSQL or mpiexec fails the run instead of skipping half of it.
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def missing(reason: str, switch: str) -> NoReturn:
    """Fail if the environment variable ``switch`` is 1, else skip; either way say why."""
    if os.environ.get(switch) == "1":
        pytest.fail(f"{switch}=1 but {reason}")
    pytest.skip(reason)
