"""Checking a job against the cluster and submitting it with ``sbatch``.

Every check runs before anything is written or submitted, and a failed one is
a :class:`~benchdb.errors.UserError` naming the fix: no ``sbatch`` on PATH, a
partition ``sinfo`` does not list, fewer than one node or task, or a database
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


def partitions() -> list[str]:
    """The partitions ``sinfo`` lists (the default one's ``*`` removed)."""
    proc = subprocess.run(
        [find_tool("sinfo"), "-h", "-o", "%P"], capture_output=True, text=True, timeout=60
    )
    if proc.returncode != 0:
        reason = " ".join(proc.stderr.split()) or f"exit code {proc.returncode}"
        raise UserError(f"`sinfo` failed ({reason}); check that the Slurm controller is up")
    return [p.strip().rstrip("*") for p in proc.stdout.split() if p.strip()]


def check_allocation(allocation: Allocation) -> None:
    if allocation.nodes < 1:
        raise UserError(f"--nodes {allocation.nodes}: a job needs at least 1 node; use --nodes 2")
    if allocation.ntasks_per_node < 1:
        raise UserError(
            f"--ntasks-per-node {allocation.ntasks_per_node}: use 1 or more tasks per node"
        )


def check_partition(partition: str | None) -> None:
    """An explicit partition must be one ``sinfo`` lists."""
    if partition is None:
        return
    known = partitions()
    if partition not in known:
        raise UserError(
            f"unknown partition {partition!r}; `sinfo` lists {', '.join(known) or 'none'}"
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
