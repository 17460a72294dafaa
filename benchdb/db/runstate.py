"""What a run row's status and times hold, without the ORM: the states a run is in and
the clock its times come from.  Domain code and collectors import these; the entities
(:mod:`benchdb.db.models`) stay behind the data layer."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum


class RunStatus(StrEnum):
    """The states a run is in (``run.status``)."""

    RUNNING = "running"
    COMPLETE = "complete"
    INTERRUPTED = "interrupted"  # Ctrl-C, SIGTERM, a time budget, or its process gone
    FAILED = "failed"


RUN_STATUSES = tuple(RunStatus)


def utcnow() -> datetime:
    """Timezone-aware now; stored as UTC."""
    return datetime.now(UTC)
