"""The batch script of a benchdb Slurm job, as a typed value rendered to text.

A job is the allocation (``#SBATCH`` lines) and one step: an ``srun`` line, or
for a whole application run, ``benchdb app run`` itself on the first node,
whose MPI launcher places the ranks on the allocation's nodes.  The step runs
benchdb with the absolute path of the Python that submitted it, so the nodes
run the same installation (a virtual environment on a shared file system, as
clusters provide).  Arguments are shell-quoted, so a database URL
or a shape list reaches the nodes unchanged -- except a password in the URL, which the
script never holds: Slurm keeps every script, and the ``srun`` line is every node's
``ps``.  The job gets the password in its environment (:func:`.submit.submit`).
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from ..db.urls import split_password


@dataclass(frozen=True)
class Allocation:
    """What ``sbatch`` is asked for; ``None`` leaves the cluster's default."""

    nodes: int
    ntasks_per_node: int = 1
    partition: str | None = None
    time: str | None = None
    account: str | None = None
    extra: tuple[str, ...] = ()  # further sbatch options, verbatim, after benchdb's own

    def directives(self, job_name: str, output: str) -> list[str]:
        opts = [f"--job-name={job_name}", f"--nodes={self.nodes}"]
        opts.append(f"--ntasks-per-node={self.ntasks_per_node}")
        for name, value in (
            ("partition", self.partition),
            ("time", self.time),
            ("account", self.account),
        ):
            if value is not None:
                opts.append(f"--{name}={value}")
        opts.append(f"--output={output}")
        return [f"#SBATCH {shlex.quote(o)}" for o in [*opts, *self.extra]]


@dataclass(frozen=True)
class BatchScript:
    """One job: its allocation and the step that runs benchdb on the nodes."""

    job_name: str
    allocation: Allocation
    step: tuple[str, ...]  # the full command line of the step
    output: str  # the job's stdout and stderr (sbatch --output pattern, %j = job id)

    def render(self) -> str:
        return "\n".join(
            [
                "#!/bin/bash",
                *self.allocation.directives(self.job_name, self.output),
                "set -euo pipefail",
                'echo "benchdb job $SLURM_JOB_ID on $SLURM_JOB_NODELIST"',
                shlex.join(self.step),
                "",
            ]
        )


def python_command(module: str, args: Sequence[str]) -> list[str]:
    """``<this Python> -m <module> ARGS``: the nodes run this installation of benchdb."""
    return [sys.executable, "-m", module, *args]


def collect_script(
    allocation: Allocation, db_url: str, collect_args: Sequence[str], output: str
) -> BatchScript:
    """Every node runs ``benchdb collect`` once (one task per node) into ``db_url`` (its
    password left out)."""
    n = allocation.nodes
    step = [
        "srun", "--label", f"--nodes={n}", f"--ntasks={n}", "--ntasks-per-node=1",
        *python_command("benchdb", ["collect", "--db", split_password(db_url)[0],
                                    *collect_args]),
    ]  # fmt: skip
    return BatchScript("benchdb-collect", allocation, tuple(step), output)


def comm_script(
    allocation: Allocation, db_url: str, module_args: Sequence[str], output: str, mpi: str
) -> BatchScript:
    """One MPI job over every allocated task runs the communication benchmarks into
    ``db_url`` (its password left out).

    ``mpi`` is srun's PMI plugin; the mpich wheel's library speaks ``pmi2``.

    ``--kill-on-bad-exit=1``: a rank that dies without ``MPI_Abort`` reaching srun (killed,
    crashed, or failed in ``MPI_Init`` before PMI could carry its abort) ends the step.
    Without it srun waits for the other ranks, which sit in MPI waiting for the dead one:
    the job would hold its nodes, running, until its time limit (forever in a partition
    without one), and ``--wait`` would follow it that long.
    """
    step = [
        "srun", f"--mpi={mpi}", "--kill-on-bad-exit=1",
        *python_command("benchdb.collectors.mpi", ["--db", split_password(db_url)[0],
                                                   *module_args]),
    ]  # fmt: skip
    return BatchScript("benchdb-comm", allocation, tuple(step), output)


def app_script(
    allocation: Allocation, db_url: str, run_args: Sequence[str], output: str
) -> BatchScript:
    """One whole run (``benchdb app run``) into ``db_url`` (its password left out), started
    on the first node: its launch line's ``mpiexec`` (MPICH's hydra reads the Slurm
    allocation) places the allocation's tasks, nodes x tasks per node, as the ranks."""
    ranks = allocation.nodes * allocation.ntasks_per_node
    step = python_command(
        "benchdb",
        ["app", "run", "--db", split_password(db_url)[0], "--max-ranks", str(ranks), *run_args],
    )
    return BatchScript("benchdb-app", allocation, tuple(step), output)


def calibrate_script(allocation: Allocation, db_url: str, program: str, output: str) -> BatchScript:
    """A program's exchange calibration across the nodes (``benchdb app calibrate
    --ranks-per-node``), started on the first node as :func:`app_script`'s run is: every
    calibration run's ranks placed as the allocation's tasks are."""
    ranks = allocation.nodes * allocation.ntasks_per_node
    step = python_command(
        "benchdb",
        ["app", "calibrate", "--db", split_password(db_url)[0], "--program", program,
         "--ranks", str(ranks), "--ranks-per-node", str(allocation.ntasks_per_node)],
    )  # fmt: skip
    return BatchScript("benchdb-calibrate", allocation, tuple(step), output)
