"""``benchdb slurm``: collect on many nodes, measure communication and run whole
applications across nodes, via Slurm.

Each command writes a batch script (:mod:`benchdb.slurm.script`) and submits it
with ``sbatch`` (:mod:`benchdb.slurm.submit`), or prints it with ``--dry-run``;
``--wait`` follows the job to its end (:mod:`.slurm_wait`).  Bad input -- and what
would fail or pend on the nodes -- is refused before anything is written or submitted.
"""

from __future__ import annotations

from dataclasses import dataclass
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
from .common import DbOption, JsonOption, console, err_console, input_file, open_db, print_json
from .groups import HelpGroup
from .option_groups import option_group

app = typer.Typer(
    help="Run benchdb on a Slurm cluster: every node collects into one shared database, "
    "one MPI job measures communication between nodes, one whole run of the model or "
    "your program spans them, or your program's runs across them time its exchanges.\n\n"
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
    bool,
    typer.Option(
        "--dry-run",
        help="Check every option (against the partition, where sinfo is here), print the "
        "batch script; submit nothing.",
    ),
]
WaitOption = Annotated[
    bool,
    typer.Option(
        "--wait",
        help="Follow the job until it ends, then print its state, exit code and the runs it "
        "wrote (and the end of its output if it failed); exit 0 if it completed, 1 if not.",
    ),
]


def _output(kind: str) -> str:
    """Where the job's output goes: ``benchdb-<kind>-<job id>.out`` in this directory."""
    return str(Path.cwd() / f"benchdb-{kind}-%j.out")


@dataclass(frozen=True)
class JobOptions:
    """What every ``benchdb slurm`` command asks of the job beyond its nodes: where it
    runs, what it may use, and whether to submit it, print it or follow it."""

    partition: PartitionOption = None
    time: TimeOption = None
    account: AccountOption = None
    sbatch_arg: SbatchArgOption = None
    dry_run: DryRunOption = False
    wait: WaitOption = False
    db: DbOption = None
    as_json: JsonOption = False

    def allocation(self, nodes: int, ntasks_per_node: int):  # type: ignore[no-untyped-def]
        """The checked allocation and database URL (the cluster is asked next, by
        :func:`_partition`)."""
        from ..db.engine import resolve_url
        from ..slurm import submit
        from ..slurm.script import Allocation

        if self.wait and self.dry_run:  # a dry run submits nothing, so nothing to follow
            raise UserError("--dry-run submits no job to wait for; leave out --wait or --dry-run")
        allocation = Allocation(
            nodes,
            ntasks_per_node,
            self.partition,
            self.time,
            self.account,
            tuple(self.sbatch_arg or ()),
        )
        submit.check_allocation(allocation)
        url = resolve_url(self.db)
        submit.check_shared_url(url, nodes)
        submit.check_password_exported(allocation, url)
        return allocation, url

    def submit(self, script, url: str, what: str) -> None:  # type: ignore[no-untyped-def]
        """Print the script (``--dry-run``), or create the schema once and submit the job
        (and follow it to its end with ``--wait``)."""
        from ..db.urls import PASSWORD_VAR, redact, split_password
        from ..slurm import submit

        text = script.render()
        if self.dry_run:
            if self.as_json:
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
        # The schema exists before the nodes start: reachable from here, and no node waits on
        # another's migration.
        database = open_db(url, create=True)
        database.close()
        job = submit.submit(text, url)
        output = script.output.replace("%j", str(job.job_id))
        submitted = {"job_id": job.job_id, "script": text, "output": output}
        if not self.as_json:
            err_console.print(
                f"submitted job {job.job_id}: {what} into {redact(url)}; output: {output}; "
                + (
                    "following it until it ends (Ctrl-C stops following, not the job)"
                    if self.wait
                    else "watch the runs arrive with `benchdb runs list --db URL`"
                ),
                highlight=False,
                soft_wrap=True,
            )
        if not self.wait:
            if self.as_json:
                print_json(submitted)
            return
        from .slurm_wait import wait_for

        wait_for(job.job_id, url, output, submitted, self.as_json)


def _partition(allocation, dry_run: bool):  # type: ignore[no-untyped-def]
    """The partition the job would run in, checked to hold it (``sinfo``), dry run or not;
    ``None`` for a dry run where there is no Slurm to ask, or whose controller does not
    answer (the script is printed all the same, the latter said on stderr), or where the
    cluster has no default partition."""
    import shutil

    from ..slurm import submit

    if dry_run and shutil.which("sinfo") is None:
        return None
    if not dry_run:
        submit.find_tool("sbatch")
    try:
        found = submit.partition(allocation.partition)
    except submit.ClusterUnreachable as exc:
        if not dry_run:
            raise
        err_console.print(f"not checked against the cluster: {exc}", highlight=False)
        return None
    if found is not None:
        submit.check_fits(allocation, found)
    return found


def _collect_options(args: list[str]):  # type: ignore[no-untyped-def]
    """The pass-through options, parsed as ``benchdb collect``'s and checked as far as that
    needs no cluster (bad ones: exit 2 here); the sweep they choose, to check next."""
    from .collect_cmd import SweepOptions, check_tags
    from .collect_cmd import collect as collect_command

    if any(a == "--resume" or a.startswith("--resume=") for a in args):
        raise UserError("--resume continues a run on one machine; run `benchdb collect --resume`")
    single = typer.Typer(add_completion=False)
    single.command("collect")(collect_command)
    params = typer.main.get_command(single).make_context("benchdb collect", list(args)).params
    check_tags(params["tag"])
    return SweepOptions(
        params["kernels"], tuple(params["program"] or ()), tuple(params["plugin"] or ()),
        params["sizes"], params["footprints"], params["threads"], params["precision"],
        params["quick"], params["sample_time"], params["samples"], params["passes"],
    )  # fmt: skip


def _check_sweep(options, partition) -> None:  # type: ignore[no-untyped-def]
    """The sweep must plan, by collect's own checks: kernels known, sizes valid, threads
    and footprints within a node of ``partition`` (or of this machine, where Slurm is not
    here to ask)."""
    from ..collectors.plan import NodeLimits
    from ..machine import detect_machine

    limits = (
        NodeLimits.here()
        if partition is None
        else NodeLimits(
            partition.cpus_per_node,
            partition.memory_bytes,
            f"a node of partition {partition.name} has",
        )
    )
    options.plan(detect_machine(), limits)


@app.command(
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
@option_group("job", JobOptions)
def collect(
    ctx: typer.Context,
    job: JobOptions,
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
) -> None:
    """Every allocated node runs `benchdb collect` into one shared database.

    Options this command does not know (--quick, --kernels, --sizes, --threads ...)
    go to `benchdb collect` on every node, unchanged; see `benchdb collect --help`.
    One collector runs per node (srun --ntasks-per-node=1); each records its
    Slurm node name as its host, and nodes of one node class pool their points
    (`benchdb machine list` shows the classes).  A multi-node job needs a
    database server every node reaches: an SQLite file is refused.  The
    collect options are checked here first, by collect's own checks, against a
    node of the partition (sinfo), as are --time and --nodes: a job that would
    fail or pend forever on the nodes is not submitted (exit 2).  A job
    submitted again continues each node's unfinished run.

    Examples:

      export URL=postgresql+psycopg://me@dbhost/benchdb

      benchdb slurm collect --nodes 4 -p compute -t 1:00:00 --db $URL

      benchdb slurm collect --nodes 2 --db $URL --quick --kernels stream.triad,stencil2d5

      benchdb slurm collect --nodes 2 --db $URL --sbatch-arg=--exclusive --dry-run

      benchdb slurm collect --nodes 2 --db $URL --quick --wait
    """
    from ..slurm.script import collect_script

    allocation, url = job.allocation(nodes, ntasks_per_node)
    options = _collect_options(list(ctx.args))
    _check_sweep(options, _partition(allocation, job.dry_run))
    script = collect_script(allocation, url, list(ctx.args), _output("collect"))
    job.submit(script, url, f"benchdb collect on {nodes} node(s)")


@app.command()
@option_group("job", JobOptions)
def comm(
    job: JobOptions,
    nodes: NodesOption = 2,
    ntasks_per_node: TasksOption = 1,
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
) -> None:
    """One MPI job across the nodes runs the communication benchmarks (`benchdb comm collect`'s).

    Ranks are nodes x tasks per node, started by `srun --mpi=pmi2`; a rank that
    dies ends the job (`--kill-on-bad-exit`) rather than leaving the others
    waiting on it in MPI, holding the nodes.  Every rank reports its Slurm node
    name, which decides each point's placement (intra-socket, inter-socket,
    inter-node).  Points are committed one by one;
    submitting the same job again continues an interrupted one, even where its
    ranks land on other nodes of the same node class.  Then fit with
    `benchdb comm fit` and read the parameters with `benchdb comm show`.

    Examples:

      benchdb slurm comm --nodes 2 --db postgresql+psycopg://me@dbhost/benchdb

      benchdb slurm comm --nodes 2 --ntasks-per-node 4 --quick -p compute --db $URL

      benchdb slurm comm --nodes 2 --quick --db $URL --wait
    """
    from ..slurm.script import comm_script

    allocation, url = job.allocation(nodes, ntasks_per_node)
    options = CommJobOptions(
        benchmarks, max_bytes, sizes, decomp, halo_local, halo_fields, samples,
        min_sample_time, quick, tuple(tag or ()),
    )  # fmt: skip
    args = options.module_args(
        nodes * ntasks_per_node, f"--nodes {nodes} x --ntasks-per-node {ntasks_per_node}"
    )
    _partition(allocation, job.dry_run)
    script = comm_script(allocation, url, args, _output("comm"), mpi)
    job.submit(script, url, f"communication benchmarks on {nodes} node(s)")


# app run's options that the job sets itself
_SET_BY_THE_JOB = ("--db", "--max-ranks")


def _app_run_options(args: list[str], ranks: int, where: str):  # type: ignore[no-untyped-def]
    """The pass-through options, parsed and checked as ``benchdb app run`` checks them (the
    program's launcher found, its decomposition against the grid and the spec), with
    ``ranks`` allowed; UserError if --decomp is not ``ranks`` ranks."""
    from ..app.decomposition import parse_decomposition
    from ..collectors.app.collect import AppRunRequest, validate
    from .app_cmd import run_cmd
    from .app_options import CaseOptions, Target

    taken = [a for a in args if a.split("=", 1)[0] in _SET_BY_THE_JOB]
    if taken:
        raise UserError(f"{taken[0].split('=', 1)[0]} is set by the job; leave it out")
    single = typer.Typer(add_completion=False)
    single.command("run")(run_cmd)
    params = typer.main.get_command(single).make_context("benchdb app run", list(args)).params
    decomp = parse_decomposition(params["decomp"])
    if decomp.ranks != ranks:
        raise UserError(
            f"--decomp {decomp.key} runs {decomp.ranks} rank(s), the allocation has {ranks} "
            f"({where}); make them equal"
        )
    case = CaseOptions(params["grid"], params["steps"], params["precision"], params["diag_every"])
    req = case.app_case(decomp, AppRunRequest, max_ranks=ranks)
    target = Target.of(params["program"])
    if target.spec is None:
        validate(req, ranks)
    else:
        from ..collectors.app.program_run import plan_program_run

        plan_program_run(target.spec, req)


@app.command(
    "app",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
@option_group("job", JobOptions)
def app_run(
    ctx: typer.Context,
    job: JobOptions,
    nodes: NodesOption = 2,
    ntasks_per_node: TasksOption = 1,
) -> None:
    """One whole run of the built-in model or of your program (`benchdb app run`) across
    the nodes.

    Options this command does not know (--program, --grid, --decomp, --steps, --tag
    ...) go to `benchdb app run` unchanged, and are checked here first as it checks
    them.  The run starts on the first node; the launch line's mpiexec (MPICH's
    hydra reads the Slurm allocation) places nodes x ntasks-per-node ranks, which
    must be the ranks of --decomp.  The run is stored with its Slurm job.  Predict it
    with `benchdb app predict ... --ranks-per-node R` and the parameters between
    nodes that `benchdb slurm comm` measured (`benchdb comm fit`).

    Examples:

      benchdb slurm app --nodes 2 --db $URL --program examples/shallow_mpi/benchdb.toml \\
          --grid 600x400 --decomp 2x1 --steps 300 --wait

      benchdb slurm app --nodes 2 --db $URL --grid 1024x1024 --decomp 1x2 --steps 100
    """
    from ..slurm.script import app_script

    allocation, url = job.allocation(nodes, ntasks_per_node)
    ranks = nodes * ntasks_per_node
    _app_run_options(
        list(ctx.args), ranks, f"--nodes {nodes} x --ntasks-per-node {ntasks_per_node}"
    )
    _partition(allocation, job.dry_run)
    script = app_script(allocation, url, list(ctx.args), _output("app"))
    job.submit(script, url, f"a whole run on {nodes} node(s)")


@app.command("calibrate")
@option_group("job", JobOptions)
def calibrate(
    program: Annotated[
        str,
        typer.Option(
            "--program",
            callback=input_file("--program"),
            help="Your program's spec file; its [parallel] reports must list exchanges.",
        ),
    ],
    job: JobOptions,
    nodes: NodesOption = 2,
    ntasks_per_node: TasksOption = 1,
) -> None:
    """Your program's exchanges timed in its own runs across the nodes (`benchdb app
    calibrate --program --ranks-per-node`), for predictions of runs placed alike.

    A run across nodes exchanges between them, and inside the program an exchange also
    packs, copies and waits for the neighbour, which the message parameters of `benchdb
    slurm comm` leave out.  The job starts on the first node and runs the program at the
    calibration's square grids for every decomposition of nodes x ntasks-per-node ranks,
    its launch line's mpiexec placing them as the allocation's tasks.  `app predict
    --program ... --ranks-per-node R` then takes these exchanges, and the loops those
    runs took beside them, for runs with R ranks a node.

    Examples:

      benchdb slurm calibrate --nodes 2 --db $URL --program examples/shallow_mpi/benchdb.toml \\
          --wait
    """
    from ..app.program_app import load_program
    from ..collectors.app.program_exchanges import require_reported_exchanges
    from ..slurm.script import calibrate_script

    allocation, url = job.allocation(nodes, ntasks_per_node)
    if nodes < 2:
        raise UserError("--nodes 1 places every rank on one node: run `benchdb app calibrate "
                        "--program` there instead")  # fmt: skip
    spec = load_program(program)
    require_reported_exchanges(spec)
    _partition(allocation, job.dry_run)
    script = calibrate_script(allocation, url, str(spec.path.resolve()), _output("calibrate"))
    job.submit(script, url, f"the program's exchange calibration on {nodes} node(s)")
