"""Resuming a sweep: which run to continue, claiming it, and what it already holds.

Every pass of every point is committed as it completes (one transaction
each), so an unfinished run is a consistent prefix of its sweep's schedule.  ``collect`` continues
the most recent *unfinished* run (``interrupted``, or ``running`` with its
process gone) of this machine and environment whose stored plan has the same
``sweep_hash``; a ``complete`` run is never reused, because regression
tracking needs repeated runs of unchanged code.  Claiming is one conditional
UPDATE, so two collectors can never continue the same run, and it records the
Slurm job of the claimer.

Which host: a kernel collection continues a run of its own host only -- a run
holds one node's points, which ``--host`` tells apart from its class-mates',
and ``benchdb slurm collect`` runs one collection per node, each continuing its
own.  A communication job continues a run of any host of its node class: its
plan names ranks and their rank-to-node mapping, not nodes, and a resubmitted
job's rank 0 may land on another node than the cancelled one's.
"""

from __future__ import annotations

import os
import socket

from sqlalchemy import select, update

from .. import scheduler
from ..errors import UserError
from .engine import Database
from .models import Kernel, Machine, Measurement, Run
from .runs import mark_stale_runs
from .runstate import RunKind, RunStatus

RESUMABLE = (RunStatus.INTERRUPTED, RunStatus.FAILED)
RUN_KIND = RunKind.KERNELS
AB_MODE = "ab"  # config["mode"] of the two runs of ``benchdb ab``, continued only by it


def find_resumable(
    db: Database,
    machine_id: int,
    environment_id: int,
    sweep_hash: str | None,
    *,
    mode: str | None = None,
    kind: RunKind = RUN_KIND,
    statuses: tuple[str, ...] = (RunStatus.INTERRUPTED,),
    node_class: bool = False,
) -> int | None:
    """The newest unfinished run (in ``statuses``) on this machine and environment of this
    sweep (``sweep_hash``) or of any sweep of plan mode ``mode`` (``refine`` continues
    its own round whatever its points).

    ``node_class``: on any host of this machine's node class.  A job's plan that names no
    host (a comm job's ranks and their rank-to-node mapping, not which nodes) measures the
    same points on every node of the class, and Slurm may start the resubmitted job on
    other nodes than the cancelled one.
    """
    mark_stale_runs(db)
    if node_class:
        same_class = select(Machine.node_class_id).where(Machine.id == machine_id)
        where = Run.machine_id.in_(
            select(Machine.id).where(Machine.node_class_id == same_class.scalar_subquery())
        )
    else:
        where = Run.machine_id == machine_id
    with db.session() as s:
        runs = s.scalars(
            select(Run)
            .where(
                where,
                Run.environment_id == environment_id,
                Run.kind == kind,
                Run.status.in_(statuses),
            )
            .order_by(Run.id.desc())
        )
        return next(
            (
                r.id
                for r in runs
                if (sweep_hash is None or r.config.get("sweep_hash") == sweep_hash)
                and (mode is None or r.config.get("mode") == mode)
            ),
            None,
        )


def check_explicit(db: Database, run_id: int, machine_fp: str, environment_fp: str) -> dict:
    """The config of run ``run_id`` if this process may continue it; UserError otherwise."""
    mark_stale_runs(db)
    with db.session() as s:
        run = s.get(Run, run_id)
        if run is None or run.kind != RUN_KIND:
            raise UserError(
                f"no collection run {run_id}; `benchdb runs list` shows the runs you can resume"
            )
        if (run.config or {}).get("mode") == AB_MODE:
            raise UserError(
                f"run {run_id} is one side of an A/B pair; run the same `benchdb ab` command "
                "to continue it"
            )
        if run.status == RunStatus.COMPLETE:
            raise UserError(
                f"run {run_id} is already complete; run `benchdb collect` without --resume "
                "for a new run"
            )
        if run.status == RunStatus.RUNNING:
            raise UserError(
                f"run {run_id} is still running (pid {run.pid} on {run.hostname}); "
                "wait for it or stop it first"
            )
        if run.machine.fingerprint != machine_fp or run.environment.fingerprint != environment_fp:
            raise UserError(
                f"run {run_id} was recorded on another machine or software environment; "
                "its points would not compare with this one's -- start a new run instead"
            )
        return dict(run.config)


def claim(db: Database, *run_ids: int) -> bool:
    """Mark unfinished runs ``running`` under this process and the Slurm job it runs in
    (:func:`~benchdb.scheduler.with_current_job`), all or none (the two runs of an A/B
    pair); False if another got one of them first.

    Each UPDATE is conditional on its run still being unfinished, so of two claimers
    that read the same config only one writes it; a claim that misses one run rolls
    back the others.
    """
    try:
        with db.session() as s:
            configs = dict(s.execute(select(Run.id, Run.config).where(Run.id.in_(run_ids))).all())
            for run_id in run_ids:
                if run_id not in configs:
                    raise _Missed
                done = s.execute(
                    update(Run)
                    .where(Run.id == run_id, Run.status.in_(RESUMABLE))
                    .values(
                        status=RunStatus.RUNNING,
                        pid=os.getpid(),
                        hostname=socket.gethostname(),
                        ended_at=None,
                        config=scheduler.with_current_job(configs[run_id]),
                    )
                )
                if done.rowcount != 1:
                    raise _Missed  # the session rolls back this claim's other runs
    except _Missed:
        return False
    return True


class _Missed(Exception):
    """A run of a claim was gone or taken: the claim's transaction rolls back."""


def stored_points(
    db: Database, run_id: int, to_benchmark: dict[str, str]
) -> dict[tuple[str, str, int, str], int]:
    """Passes stored per point key (benchmark, shape key, threads, precision) of run ``run_id``;
    ``to_benchmark`` maps a kernel name to the benchmark that times it.

    A pass is committed in one transaction for all the point's kernels, so
    they agree; the minimum is taken all the same.
    """
    with db.session() as s:
        rows = s.execute(
            select(
                Kernel.name,
                Measurement.shape_key,
                Measurement.threads,
                Measurement.precision,
                Measurement.passes,
            )
            .join(Kernel, Measurement.kernel_id == Kernel.id)
            .where(Measurement.run_id == run_id)
        )
        stored: dict[tuple[str, str, int, str], int] = {}
        for k, sk, t, p, passes in rows:
            key = (to_benchmark.get(k, k), sk, t, p)
            stored[key] = min(stored.get(key, passes), passes)
        return stored
