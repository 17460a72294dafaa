"""Checking a job against the cluster and submitting it with ``sbatch``.

Every check runs before anything is written or submitted, and a failed one is
a :class:`~benchdb.errors.UserError` naming the fix: no ``sbatch`` on PATH, a
partition ``sinfo`` does not list or with fewer nodes than asked for (the job
would pend forever), fewer than one node or task, a time limit sbatch would
not parse, or a database
the nodes cannot share (an SQLite file for a job on more than one node: each
node would write a file of its own, or corrupt one on a network file system),
or an ``--export`` that would keep the database password from the job.

A password in the database URL is not written into the batch script (Slurm keeps a copy,
and the ``srun`` line is every node's ``ps``): ``sbatch`` runs with it in ``PGPASSWORD``,
and exports its environment to the job (``--export=ALL``, the default), whose ``srun``
passes it on to every task.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from ..db.urls import PASSWORD_VAR, child_environment, split_password
from ..errors import UserError
from .script import Allocation


def find_tool(name: str) -> str:
    """The absolute path of a Slurm command; UserError when Slurm is not installed here."""
    path = shutil.which(name)
    if path is None:
        raise UserError(
            f"no `{name}` on PATH: run this on a Slurm login node (or load the cluster's "
            "slurm module), or use --dry-run to print the batch script"
        )
    return path


@dataclass(frozen=True)
class Partition:
    """A partition as ``sinfo`` lists it: what one job in it can get."""

    name: str
    nodes: int
    cpus_per_node: int  # the fewest of its nodes
    memory_bytes: int  # per node, the least of its nodes (sinfo's %m, MiB)


class ClusterUnreachable(UserError):
    """``sinfo`` did not answer: the cluster cannot be asked (a dry run goes on without it)."""


def partition(name: str | None) -> Partition | None:
    """Partition ``name``, else the cluster's default (``None`` where there is none);
    UserError for a partition ``sinfo`` does not list, or when ``sinfo`` fails."""
    proc = subprocess.run(
        [find_tool("sinfo"), "-h", "-N", "-o", "%P %N %c %m"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if proc.returncode != 0:
        reason = " ".join(proc.stderr.split()) or f"exit code {proc.returncode}"
        raise ClusterUnreachable(
            f"`sinfo` failed ({reason}); check that the Slurm controller is up"
        )
    nodes: dict[str, dict[str, tuple[int, int]]] = {}
    default = None
    for line in proc.stdout.splitlines():
        fields = line.split()
        if len(fields) != 4:
            continue
        part, node, cpus, memory = fields
        if part.endswith("*"):
            part = default = part.rstrip("*")
        nodes.setdefault(part, {})[node] = (_count(cpus), _count(memory))
    chosen = default if name is None else name
    if chosen is None:
        return None
    if chosen not in nodes:
        raise UserError(f"unknown partition {chosen!r}; `sinfo` lists {', '.join(nodes) or 'none'}")
    sizes = nodes[chosen].values()
    return Partition(chosen, len(sizes), min(c for c, _ in sizes), min(m for _, m in sizes) << 20)


def _count(text: str) -> int:
    """A count ``sinfo`` prints (``6026``, or ``6026+`` for "at least")."""
    return int(text.rstrip("+")) if text.rstrip("+").isdigit() else 0


TIME_FORMAT = re.compile(r"(\d+-)?\d+(:\d+){0,2}|INFINITE|UNLIMITED", re.IGNORECASE)
"""sbatch's --time: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS, or no limit."""


def check_allocation(allocation: Allocation) -> None:
    """What needs no cluster to check: counts and the time format."""
    if allocation.nodes < 1:
        raise UserError(f"--nodes {allocation.nodes}: a job needs at least 1 node; use --nodes 2")
    if allocation.ntasks_per_node < 1:
        raise UserError(
            f"--ntasks-per-node {allocation.ntasks_per_node}: use 1 or more tasks per node"
        )
    if allocation.time is not None and not TIME_FORMAT.fullmatch(allocation.time):
        raise UserError(
            f"--time {allocation.time!r} is not a Slurm time limit; write minutes, MM:SS, "
            "HH:MM:SS or D-HH:MM:SS, e.g. --time 30:00"
        )


def check_fits(allocation: Allocation, found: Partition) -> None:
    """A job asking for more nodes than its partition has would pend forever."""
    if allocation.nodes > found.nodes:
        raise UserError(
            f"--nodes {allocation.nodes}: partition {found.name} has {found.nodes} node(s), "
            f"so the job would never start; use --nodes {found.nodes} or fewer, or a larger "
            "partition (-p)"
        )


def check_shared_url(url: str, nodes: int) -> None:
    """The nodes of a multi-node job need a database server they all reach."""
    try:
        backend = make_url(url).get_backend_name()
    except ArgumentError:
        raise UserError(
            f"--db {url!r} is not a database URL; write e.g. postgresql+psycopg://user@host/db"
        ) from None
    if backend == "sqlite" and nodes > 1:
        raise UserError(
            f"--db is an SQLite file, which {nodes} nodes cannot share; give a PostgreSQL URL "
            "every node reaches, e.g. --db postgresql+psycopg://user@dbhost/benchdb"
        )


EXPORT_VAR = "SBATCH_EXPORT"  # sbatch's --export, overriding the script's #SBATCH lines


def export_setting(allocation: Allocation, environ: Mapping[str, str]) -> tuple[str, str] | None:
    """The job's ``--export`` and where it was given: ``$SBATCH_EXPORT`` (input environment
    variables override the script's directives), else the last ``--export`` among the sbatch
    options; ``None``: sbatch's default, ``ALL``."""
    if EXPORT_VAR in environ:
        return environ[EXPORT_VAR], f"{EXPORT_VAR}={environ[EXPORT_VAR]}"
    found = None
    for option in allocation.extra:
        name, sep, value = option.replace(" ", "=", 1).partition("=")
        if name == "--export" and sep:
            found = value.strip(), f"--sbatch-arg={option}"
    return found


def check_password_exported(
    allocation: Allocation, url: str, environ: Mapping[str, str] | None = None
) -> None:
    """A password taken out of the URL reaches the job only in the environment sbatch
    exports: refuse ``--export`` settings that leave ``PGPASSWORD`` out (``NONE``, ``NIL``,
    a list without it), before the job would fail to connect on its nodes."""
    if split_password(url)[1] is None:
        return
    found = export_setting(allocation, os.environ if environ is None else environ)
    if found is None:
        return
    setting, given = found
    names = {item.partition("=")[0].strip() for item in setting.split(",")}
    if names & {"ALL", PASSWORD_VAR}:
        return
    raise UserError(
        f"{given} keeps the database password from the job: benchdb passes the password "
        f"of the URL as {PASSWORD_VAR} in the job's environment, never in the script; add "
        f"it to the list (--export={PASSWORD_VAR},...) or use --export=ALL, or put the "
        "password in ~/.pgpass on the nodes and remove it from the URL"
    )


@dataclass(frozen=True)
class Submitted:
    job_id: int
    cluster: str | None


_PARSABLE = re.compile(r"^\s*(\d+)(?:;(\S+))?\s*$")


def submit(script: str, url: str) -> Submitted:
    """Hand ``script`` to ``sbatch --parsable`` on its stdin; the job id it answers.

    sbatch runs in this environment with the password of ``url``, the job's database, in
    ``PGPASSWORD`` (:func:`~benchdb.db.urls.child_environment`): the job inherits it.
    """
    proc = subprocess.run(
        [find_tool("sbatch"), "--parsable"],
        input=script,
        capture_output=True,
        text=True,
        timeout=120,
        env=child_environment(url)[1],
    )
    m = _PARSABLE.match(proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else "")
    if proc.returncode != 0 or m is None:
        reason = " ".join(proc.stderr.split()) or f"exit code {proc.returncode}"
        raise UserError(f"sbatch refused the job: {reason}")
    return Submitted(int(m.group(1)), m.group(2))
