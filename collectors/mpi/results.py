"""Benchmark points, committed one by one into a run that an interrupted job continues.

Rank 0 holds every point (each sample is already the maximum over ranks, see
:mod:`.collective_timing`) and commits each as it is measured, in a transaction of its
own, like ``benchdb collect`` (:mod:`benchdb.db.resume`): a job killed
anywhere, on any rank, loses at most the point in flight.  The run is
``running`` until every rank has finished, then ``complete``.  A job with the
same plan (benchmarks, sizes, samples, ranks and their rank-to-node mapping:
``sweep_hash``) and software, whose rank 0 runs on any host of the same node class,
continues the newest unfinished comm run -- ``interrupted`` (SIGTERM, or its
process gone) or ``failed`` (a rank's error) -- and measures only the points it
lacks.  The plan names no node, so a resubmitted job that Slurm starts on other
nodes of the class continues the run all the same; the run then lists the hosts
of both jobs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from benchdb.db import resume
from benchdb.db.comm_models import PointKey, add_comm_point, continue_comm_run, new_comm_run
from benchdb.db.engine import Database
from benchdb.db.repo import register_environment, register_machine
from benchdb.db.runstate import RunKind, RunStatus
from benchdb.environment import detect_environment
from benchdb.machine import detect_machine
from benchdb.stats import summarize
from benchdb.verdicts import Flag

from .collective_timing import Timed

RUN_KIND = RunKind.COMM

Skip = Callable[[PointKey], bool]  # True: the run already holds this point


def point_key(
    benchmark: str, ranks: int, pairs: int, placement: str, message_bytes: int, params_key: str
) -> PointKey:
    """What makes a point unique within a run; known before it is measured."""
    return (benchmark, ranks, pairs, placement, message_bytes, params_key)


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
    samples: list[float]  # the clean ones (collective_timing.Timed)
    flags: list[str] = field(default_factory=list)
    evidence: dict[str, list[Any]] = field(default_factory=dict)
    set_aside: dict[str, list[Any]] = field(default_factory=dict)

    @classmethod
    def measured(cls, timed: Timed, **where: Any) -> CommPoint:
        """The point ``where`` names (benchmark, ranks, ...), with what ``timed`` took."""
        return cls(
            **where,
            repetitions=timed.repetitions,
            samples=timed.samples,
            flags=list(timed.flags),
            evidence=timed.evidence,
            set_aside=timed.set_aside,
        )

    def columns(self) -> dict[str, Any]:
        """The ``comm_measurement`` columns of this point: its fields and statistics."""
        st = summarize(self.samples)
        return dict(
            benchmark=self.benchmark,
            ranks=self.ranks,
            nodes=self.nodes,
            pairs=self.pairs,
            placement=self.placement,
            message_bytes=self.message_bytes,
            params_key=self.params_key,
            params=self.params,
            repetitions=self.repetitions,
            samples=self.samples,
            evidence=self.evidence,
            set_aside=self.set_aside,
            t_min=st.t_min,
            t_median=st.t_median,
            t_iqr=st.t_iqr,
            t_cv=st.t_cv,
            flags=[*self.flags, *([Flag.NOISY] if st.noisy else [])],
        )

    @property
    def key(self) -> PointKey:
        return point_key(
            self.benchmark, self.ranks, self.pairs, self.placement, self.message_bytes,
            self.params_key,
        )  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        s = summarize(self.samples)
        d.update(t_min=s.t_min, t_median=s.t_median, t_iqr=s.t_iqr, t_cv=s.t_cv)
        return d


def write_run(
    db: Database, points: list[CommPoint], *, config: dict[str, Any], tags: list[str]
) -> int:
    """Insert a complete run and every point in one transaction (imports, tests); its id."""
    return new_comm_run(
        db,
        kind=RUN_KIND,
        status=RunStatus.COMPLETE,
        config=config,
        tags=tags,
        points=[p.columns() for p in points],
    )


@dataclass(frozen=True)
class OpenedRun:
    run_id: int
    resumed: bool
    done: frozenset[PointKey]  # points the run already holds


def open_run(db: Database, config: dict[str, Any], tags: list[str]) -> OpenedRun:
    """Continue the newest unfinished run of this plan (``config["sweep_hash"]``) on this
    node class, else start a new ``running`` one."""
    with db.session() as s:
        machine_id = register_machine(s, detect_machine()).id
        environment_id = register_environment(s, detect_environment()).id
    found = resume.find_resumable(
        db,
        machine_id,
        environment_id,
        config["sweep_hash"],
        kind=RUN_KIND,
        statuses=resume.RESUMABLE,
        node_class=True,
    )
    if found is not None and resume.claim(db, found):
        return OpenedRun(found, True, continue_comm_run(db, found, config["hosts"]))
    run_id = new_comm_run(db, kind=RUN_KIND, status=RunStatus.RUNNING, config=config, tags=tags)
    return OpenedRun(run_id, False, frozenset())


def write_point(db: Database, run_id: int, point: CommPoint) -> None:
    """Commit one point of run ``run_id`` (its own transaction)."""
    add_comm_point(db, run_id, point.columns())
