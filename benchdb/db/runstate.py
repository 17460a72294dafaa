"""What a run row's kind, status and times hold, without the ORM: what a run measured,
the states it is in and the clock its times come from.  Domain code and collectors
import these; the entities (:mod:`benchdb.db.models`) stay behind the data layer."""

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


class RunKind(StrEnum):
    """What a run measured (``run.kind``), by the command that makes it."""

    KERNELS = "kernels"  # benchdb collect, and each side of benchdb ab
    COMM = "comm"  # benchdb comm collect, benchdb slurm comm
    APP = "app"  # benchdb app run: whole runs
    APP_CALIBRATE = "app-calibrate"  # benchdb app calibrate: populated curves, exchanges


def utcnow() -> datetime:
    """Timezone-aware now; stored as UTC."""
    return datetime.now(UTC)
