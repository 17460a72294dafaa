"""The batch scheduler a process runs under, behind one small interface.

The core needs three things of a scheduler (docs/design.md, "Schedulers"):

* the job this process runs in, recorded with every run: a run left
  ``running`` by a process killed on another node is stale once its job has
  ended, where a process id says nothing (:func:`benchdb.db.runs.is_stale`);
* whether a recorded job has ended;
* the node's name in the scheduler's namespace, which is the host of every
  measurement (two nodes emulated on one computer are two nodes);
* the job's nodes and tasks a node, which is how an MPI launcher started inside
  it places the ranks (a calibration across nodes is tagged with it).

Slurm is the one real implementation (:mod:`benchdb.slurm.jobs`).  Without a
scheduler (a workstation, ``mpiexec`` with a host file) there is no job, and the
node is the hostname.  A second scheduler (PBS, LSF, Flux) is a module with a
``SCHEDULER`` that implements :class:`Scheduler`, listed in
:data:`IMPLEMENTATIONS`; writing, submitting and following its jobs stay with its
own commands, as ``benchdb slurm`` does for Slurm.
"""

from __future__ import annotations

import importlib
import socket
from collections.abc import Mapping
from functools import cache
from typing import Any, Protocol

# Modules whose ``SCHEDULER`` implements :class:`Scheduler`, asked in this order.
IMPLEMENTATIONS = ("benchdb.slurm.jobs",)


class Scheduler(Protocol):
    """What the core asks of one batch scheduler."""

    name: str
    config_key: str  # the key of ``run.config`` that holds the job id

    def current_job(self) -> str | None:
        """The id of the job this process runs in; None outside one of this scheduler's."""

    def job_ended(self, job_id: str) -> bool:
        """Whether job ``job_id`` is no longer live; False where that cannot be known."""

    def node_name(self) -> str | None:
        """This node's name as the scheduler knows it; None outside its jobs."""

    def allocation(self) -> tuple[int, int] | None:
        """The job's (nodes, tasks a node); None outside its jobs, or where the job
        does not place a fixed number of tasks on each node."""


@cache
def schedulers() -> tuple[Scheduler, ...]:
    """Every implementation of :data:`IMPLEMENTATIONS`."""
    return tuple(importlib.import_module(m).SCHEDULER for m in IMPLEMENTATIONS)


def with_current_job(config: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` naming the job this process runs in, or none outside a scheduler's job.

    For a run created here and for one continued here alike: a continued run that kept
    the id of a job that has ended would look stale to every other host
    (:func:`job_ended`), and a collector there would mark it ``interrupted`` while this
    process measures into it.
    """
    keys = {s.config_key for s in schedulers()}
    kept = {k: v for k, v in config.items() if k not in keys}
    for scheduler in schedulers():
        job = scheduler.current_job()
        if job:
            return {**kept, scheduler.config_key: job}
    return kept


def job_ended(config: Mapping[str, Any]) -> bool:
    """Whether the scheduler's job a run's ``config`` names has ended (False where it names
    none, or the scheduler cannot tell)."""
    for scheduler in schedulers():
        job = config.get(scheduler.config_key)
        if job is not None:
            return scheduler.job_ended(str(job))
    return False


def scheduled_node_name() -> str | None:
    """This node's name in the scheduler's namespace; None outside a scheduler's job."""
    return next((n for n in (s.node_name() for s in schedulers()) if n), None)


def node_name() -> str:
    """The name of the node this process runs on: the scheduler's, else the hostname."""
    return scheduled_node_name() or socket.gethostname()


def job_allocation() -> tuple[int, int] | None:
    """(nodes, tasks a node) of the scheduler's job this process runs in; None outside
    one, or where it places no fixed number a node."""
    return next((a for a in (s.allocation() for s in schedulers()) if a), None)
