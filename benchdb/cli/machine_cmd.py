"""``benchdb machine``: this machine's node class and host, shown or stored; the database's."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import typer

from ..machine import detect_machine
from ..units import fmt_bytes
from .common import DbOption, JsonOption, console, emit, open_db, print_json, print_table
from .groups import HelpGroup

app = typer.Typer(
    help="Describe this machine (node class: CPU, caches, memory; host) and register it; "
    "list the node classes and hosts of a database.",
    no_args_is_help=True,
    cls=HelpGroup,
)


def _caches_text(caches: list[dict[str, Any]]) -> str:
    return ", ".join(
        f"{c['name']} {fmt_bytes(c['size_bytes'])}" for c in caches if c["type"] != "Instruction"
    )


@app.command()
def show(as_json: JsonOption = False) -> None:
    """Print this machine's node class, its host name and its full description.

    The node class is what sets performance: CPU model, sockets, cores, threads
    per core, NUMA nodes, caches, memory rounded up to the size installed, and
    the ISA features code generation uses.  Identical nodes share it and an OS
    or microcode update keeps it, so their data pool.  The host is the node's
    name: the Slurm node name (SLURMD_NODENAME) inside a Slurm job, else the
    hostname.  Nothing is written.

    Examples:

        benchdb machine show

        benchdb machine show --json
    """
    info = detect_machine()
    cls = info.node_class
    if as_json:
        print_json(
            {
                "node_class": {"fingerprint": cls.fingerprint, **cls.to_dict()},
                "host": info.hostname,
                "fingerprint": info.fingerprint,
                **info.to_dict(),
            }
        )
        return
    console.print(
        f"node class [bold]{cls.fingerprint[:12]}[/bold]: {cls.cpu_model} ({cls.architecture}), "
        f"{cls.sockets} socket(s), {cls.cores} core(s), {cls.threads_per_core} thread(s)/core, "
        f"{cls.numa_nodes} NUMA node(s), {fmt_bytes(cls.memory_bytes)} memory"
    )
    console.print(f"  ISA features: {' '.join(cls.isa_features) or '-'}")
    console.print(
        f"host [bold]{info.hostname}[/bold] ({info.fingerprint[:12]}): {info.os}, kernel "
        f"{info.kernel_release}, MemTotal {fmt_bytes(info.memory_bytes)}, "
        f"{len(info.isa_flags)} cpuinfo flags; caches from {info.source}"
    )
    rows = [
        {
            "name": c.name,
            "size": c.size_bytes,
            "line": c.line_bytes,
            "ways": c.associativity,
            "shared": ",".join(map(str, c.shared_cpus)),
        }
        for c in info.caches
    ]
    print_table(
        rows,
        [
            ("name", "cache", None),
            ("size", "size", fmt_bytes),
            ("line", "line (B)", None),
            ("ways", "ways", None),
            ("shared", "shared by CPUs", None),
        ],
    )


@app.command()
def register(db: DbOption = None, as_json: JsonOption = False) -> None:
    """Store this machine's node class and host in the database (idempotent).

    Example:

        benchdb machine register --db postgresql+psycopg://user@host/bench
    """
    from ..db.repo import register_host

    database = open_db(db, create=True)
    info = detect_machine()
    host = register_host(database, info)
    result = {**asdict(host), "database": database.display_url}
    if as_json:
        print_json(result)
    else:
        typer.echo(
            f"host {result['id']} ({info.hostname}) of node class {result['node_class_id']} "
            f"({result['node_class'][:12]}) registered in {result['database']}"
        )


@app.command("list")
def list_(db: DbOption = None, as_json: JsonOption = False) -> None:
    """List the node classes in the database, with their hosts and runs.

    The class id, a host's name or a fingerprint prefix is what --machine takes
    (predict, compare, history, ...); a host's name is what --host takes.

    Examples:

        benchdb machine list

        benchdb machine list --json
    """
    from ..db.scope import node_classes

    classes = node_classes(open_db(db))
    if as_json:
        print_json(classes)
        return
    rows = [
        {
            **c,
            "fingerprint": c["fingerprint"][:12],
            "topology": f"{c['sockets']}x{c['cores'] // max(c['sockets'], 1)}x"
            f"{c['threads_per_core']}",
            "caches": _caches_text(c["caches"]),
            "hosts": ", ".join(f"{h['host']} ({h['runs']})" for h in c["hosts"]),
        }
        for c in classes
    ]
    emit(
        rows,
        [
            ("node_class_id", "class", None),
            ("fingerprint", "fingerprint", None),
            ("cpu_model", "CPU", None),
            ("topology", "sockets x cores x threads", None),
            ("memory_bytes", "memory", fmt_bytes),
            ("caches", "data caches", None),
            ("hosts", "hosts (runs)", None),
        ],
        as_json=False,
        title="node classes",
    )
