"""``benchdb slurm``: collect on many nodes, and measure communication across nodes, via Slurm.

Each command writes a batch script (:mod:`benchdb.slurm.script`) and submits it
with ``sbatch`` (:mod:`benchdb.slurm.submit`), or prints it with ``--dry-run``.
Bad input is refused before anything is written or submitted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..errors import UserError
from .comm_options import (
    ALL_BENCHMARKS,
    DEFAULT_MAX_BYTES,
    DEFAULT_SAMPLES,
    BenchmarksOption,
    CommJobOptions,
    DecompOption,
    HaloFieldsOption,
    HaloLocalOption,
    MaxBytesOption,
    MinSampleTimeOption,
    QuickOption,
    SamplesOption,
    SizesOption,
    TagOption,
)
from .common import DbOption, JsonOption, console, err_console, open_db, print_json
from .groups import HelpGroup

app = typer.Typer(
    help="Run benchdb on a Slurm cluster: every node collects into one shared database, "
    "or one MPI job measures communication between nodes.\n\n"
    "Start with `benchdb slurm collect --nodes 2 --db postgresql+psycopg://user@dbhost/benchdb "
    "--quick --dry-run` to see the batch script.",
    no_args_is_help=True,
    cls=HelpGroup,
)

_SLURM = "Slurm"
NodesOption = Annotated[
    int, typer.Option("--nodes", "-N", help="Nodes to allocate.", rich_help_panel=_SLURM)
]
TasksOption = Annotated[
    int,
    typer.Option("--ntasks-per-node", help="Tasks (MPI ranks) per node.", rich_help_panel=_SLURM),
]
PartitionOption = Annotated[
    str | None,
    typer.Option(
        "--partition", "-p", help="Partition (default: the cluster's).", rich_help_panel=_SLURM
    ),
]
TimeOption = Annotated[
    str | None,
    typer.Option(
        "--time", "-t", help="Time limit, e.g. 30:00 or 1-00:00:00.", rich_help_panel=_SLURM
    ),
]
AccountOption = Annotated[
    str | None, typer.Option("--account", "-A", help="Account to charge.", rich_help_panel=_SLURM)
]
SbatchArgOption = Annotated[
    list[str] | None,
    typer.Option(
        "--sbatch-arg",
        help="Further sbatch option, verbatim, e.g. --sbatch-arg=--exclusive (repeatable).",
        rich_help_panel=_SLURM,
    ),
]
DryRunOption = Annotated[
    bool, typer.Option("--dry-run", help="Print the batch script; submit nothing.")
]


def _output(kind: str) -> str:
    """Where the job's output goes: ``benchdb-<kind>-<job id>.out`` in this directory."""
    return str(Path.cwd() / f"benchdb-{kind}-%j.out")


def _allocation(
    nodes: int,
    ntasks_per_node: int,
    partition: str | None,
    time: str | None,
    account: str | None,
    sbatch_arg: list[str] | None,
    db: str | None,
):  # type: ignore[no-untyped-def]
    """The checked allocation and database URL (the cluster is asked later, by :func:`_submit`,
    once every option is known to be good)."""
    from ..db.engine import resolve_url
    from ..slurm import submit
    from ..slurm.script import Allocation

    allocation = Allocation(
        nodes, ntasks_per_node, partition, time, account, tuple(sbatch_arg or ())
    )
    submit.check_allocation(allocation)
    url = resolve_url(db)
    submit.check_shared_url(url, nodes)
    submit.check_password_exported(allocation, url)
    return allocation, url


def _submit(script, url: str, dry_run: bool, as_json: bool, what: str) -> None:  # type: ignore[no-untyped-def]
    """Print the script (``--dry-run``), or create the schema once and submit the job."""
    from ..db.urls import PASSWORD_VAR, redact, split_password
    from ..slurm import submit

    text = script.render()
    if dry_run:
        if as_json:
            print_json({"job_id": None, "script": text, "output": script.output})
        else:
            console.print(text, end="", markup=False, highlight=False, soft_wrap=True)
        if split_password(url)[1] is not None:
            err_console.print(
                f"note: the password of the database URL is not in the script; submitted, "
                f"the job gets it as {PASSWORD_VAR} in its environment (to submit this script "
                f"yourself, export {PASSWORD_VAR}, or keep the password in ~/.pgpass)",
                highlight=False,
                soft_wrap=True,
            )
        return
    submit.find_tool("sbatch")
    submit.check_partition(script.allocation.partition)
    # The schema exists before the nodes start: reachable from here, and no node waits on
    # another's migration.
    database = open_db(url, create=True)
    database.close()
    job = submit.submit(text, url)
    output = script.output.replace("%j", str(job.job_id))
    if as_json:
        print_json({"job_id": job.job_id, "script": text, "output": output})
        return
    err_console.print(
        f"submitted job {job.job_id}: {what} into {redact(url)}; output: {output}; "
        f"watch the runs arrive with `benchdb runs list --db URL`",
        highlight=False,
        soft_wrap=True,
    )


def _check_collect_args(args: list[str]) -> None:
    """The pass-through options must parse as ``benchdb collect``'s (bad ones: exit 2 here)."""
    from .collect_cmd import collect as collect_command

    if any(a == "--resume" or a.startswith("--resume=") for a in args):
        raise UserError("--resume continues a run on one machine; run `benchdb collect --resume`")
    single = typer.Typer(add_completion=False)
    single.command("collect")(collect_command)
    typer.main.get_command(single).make_context("benchdb collect", list(args))


@app.command(
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
def collect(
    ctx: typer.Context,
    nodes: NodesOption = 1,
    ntasks_per_node: Annotated[
        int,
        typer.Option(
            "--ntasks-per-node",
            help="Tasks per node in the allocation; the collector runs once per node "
            "(--sbatch-arg=--exclusive gives it the whole node, for --threads).",
            rich_help_panel=_SLURM,
        ),
    ] = 1,
    partition: PartitionOption = None,
    time: TimeOption = None,
    account: AccountOption = None,
    sbatch_arg: SbatchArgOption = None,
    dry_run: DryRunOption = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Every allocated node runs `benchdb collect` into one shared database.

    Options this command does not know (--quick, --kernels, --sizes, --threads ...)
    go to `benchdb collect` on every node, unchanged; see `benchdb collect --help`.
    One collector runs per node (srun --ntasks-per-node=1); each records its
    Slurm node name as its host, and nodes of one node class pool their points
    (`benchdb machine list` shows the classes).  A multi-node job needs a
    database server every node reaches: an SQLite file is refused.

    Examples:

      export URL=postgresql+psycopg://me@dbhost/benchdb

      benchdb slurm collect --nodes 4 -p compute -t 1:00:00 --db $URL

      benchdb slurm collect --nodes 2 --db $URL --quick --kernels stream.triad,stencil2d5

      benchdb slurm collect --nodes 2 --db $URL --sbatch-arg=--exclusive --dry-run
    """
    from ..slurm.script import collect_script

    allocation, url = _allocation(nodes, ntasks_per_node, partition, time, account, sbatch_arg, db)
    _check_collect_args(list(ctx.args))
    script = collect_script(allocation, url, list(ctx.args), _output("collect"))
    _submit(script, url, dry_run, as_json, f"benchdb collect on {nodes} node(s)")


@app.command()
def comm(
    nodes: NodesOption = 2,
    ntasks_per_node: TasksOption = 1,
    partition: PartitionOption = None,
    time: TimeOption = None,
    account: AccountOption = None,
    sbatch_arg: SbatchArgOption = None,
    mpi: Annotated[
        str,
        typer.Option(
            help="srun's PMI plugin (`srun --mpi=list`); the mpich wheel speaks pmi2.",
            rich_help_panel=_SLURM,
        ),
    ] = "pmi2",
    benchmarks: BenchmarksOption = ALL_BENCHMARKS,
    max_bytes: MaxBytesOption = DEFAULT_MAX_BYTES,
    sizes: SizesOption = None,
    decomp: DecompOption = None,
    halo_local: HaloLocalOption = "16,64,256,1024",
    halo_fields: HaloFieldsOption = "1,3",
    samples: SamplesOption = DEFAULT_SAMPLES,
    min_sample_time: MinSampleTimeOption = 0.002,
    quick: QuickOption = False,
    tag: TagOption = None,
    dry_run: DryRunOption = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """One MPI job across the nodes runs the communication benchmarks (`benchdb comm collect`'s).

    Ranks are nodes x tasks per node, started by `srun --mpi=pmi2`.  Every rank
    reports its Slurm node name, which decides each point's placement
    (intra-socket, inter-socket, inter-node).  Points are committed one by one;
    submitting the same job again continues an interrupted one.  Then fit with
    `benchdb comm fit` and read the parameters with `benchdb comm show`.

    Examples:

      benchdb slurm comm --nodes 2 --db postgresql+psycopg://me@dbhost/benchdb

      benchdb slurm comm --nodes 2 --ntasks-per-node 4 --quick -p compute --db $URL
    """
    from ..slurm.script import comm_script

    allocation, url = _allocation(nodes, ntasks_per_node, partition, time, account, sbatch_arg, db)
    options = CommJobOptions(
        benchmarks, max_bytes, sizes, decomp, halo_local, halo_fields, samples,
        min_sample_time, quick, tuple(tag or ()),
    )  # fmt: skip
    args = options.module_args(
        nodes * ntasks_per_node, f"--nodes {nodes} x --ntasks-per-node {ntasks_per_node}"
    )
    script = comm_script(allocation, url, args, _output("comm"), mpi)
    _submit(script, url, dry_run, as_json, f"communication benchmarks on {nodes} node(s)")
