"""Benchmark points and their single, all-or-nothing write.

Rank 0 holds every point (each sample is already the maximum over ranks, see
:mod:`.timing`).  :func:`write_run` stores the run and all its points in ONE
transaction at the end of the job -- machine, environment, run (``complete``)
and ``comm_measurement`` rows -- so a job that fails anywhere, on any rank,
leaves the database exactly as it was.
"""

from __future__ import annotations

import os
import socket
import sys
from dataclasses import asdict, dataclass, field
from typing import Any

from benchdb.db.engine import Database, redact
from benchdb.db.models import CommMeasurement, Run, utcnow
from benchdb.db.repo import register_environment, register_machine
from benchdb.environment import detect_environment
from benchdb.machine import detect_machine
from benchdb.stats import summarize


@dataclass
class CommPoint:
    benchmark: str
    ranks: int
    nodes: int
    pairs: int
    placement: str
    message_bytes: int
    params_key: str
    params: dict[str, Any]
    repetitions: int
    samples: list[float]
    flags: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        s = summarize(self.samples)
        d.update(t_min=s.t_min, t_median=s.t_median, t_iqr=s.t_iqr, t_cv=s.t_cv)
        return d


def write_run(
    db: Database, points: list[CommPoint], *, config: dict[str, Any], tags: list[str]
) -> int:
    """Insert the run and every point in one transaction; returns the run id."""
    machine, environment = detect_machine(), detect_environment()
    with db.session() as s:
        m = register_machine(s, machine)
        e = register_environment(s, environment)
        run = Run(
            machine_id=m.id,
            environment_id=e.id,
            kind="comm",
            status="complete",
            command=" ".join(redact(a) if "://" in a else a for a in sys.argv),
            tags=tags,
            config=config,
            hostname=socket.gethostname(),
            pid=os.getpid(),
            ended_at=utcnow(),
        )
        s.add(run)
        s.flush()
        for p in points:
            st = summarize(p.samples)
            s.add(
                CommMeasurement(
                    run_id=run.id,
                    benchmark=p.benchmark,
                    ranks=p.ranks,
                    nodes=p.nodes,
                    pairs=p.pairs,
                    placement=p.placement,
                    message_bytes=p.message_bytes,
                    params_key=p.params_key,
                    params=p.params,
                    repetitions=p.repetitions,
                    samples=p.samples,
                    t_min=st.t_min,
                    t_median=st.t_median,
                    t_iqr=st.t_iqr,
                    t_cv=st.t_cv,
                    flags=[*p.flags, *(["noisy"] if st.noisy else [])],
                )
            )
        return run.id
