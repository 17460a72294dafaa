"""``benchdb machine``: the hardware fingerprint, shown or stored."""

from __future__ import annotations

import typer

from ..db.repo import register_machine
from ..machine import detect_machine
from ..units import fmt_bytes
from .common import DbOption, JsonOption, console, open_db, print_json, print_table

app = typer.Typer(
    help="Describe this machine (CPU, caches, memory) and register it.", no_args_is_help=True
)


@app.command()
def show(as_json: JsonOption = False) -> None:
    """Print this machine's description and fingerprint (nothing is written)."""
    info = detect_machine()
    if as_json:
        print_json({"fingerprint": info.fingerprint, **info.to_dict()})
        return
    console.print(
        f"[bold]{info.cpu_model}[/bold] on {info.hostname} ({info.os}, "
        f"kernel {info.kernel_release})"
    )
    console.print(
        f"{info.sockets} socket(s), {info.cores} core(s), "
        f"{info.threads_per_core} thread(s)/core, {info.numa_nodes} NUMA node(s), "
        f"{fmt_bytes(info.memory_bytes)} memory; caches from {info.source}"
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
    console.print(f"fingerprint {info.fingerprint}")


@app.command()
def register(db: DbOption = None, as_json: JsonOption = False) -> None:
    """Store this machine in the database (idempotent: same fingerprint, same row)."""
    database = open_db(db, create=True)
    info = detect_machine()
    with database.session() as s:
        m = register_machine(s, info)
        result = {
            "id": m.id,
            "fingerprint": m.fingerprint,
            "hostname": m.hostname,
            "database": database.display_url,
        }
    if as_json:
        print_json(result)
    else:
        typer.echo(
            f"machine {result['id']} ({info.hostname}, {info.fingerprint[:12]}) "
            f"registered in {result['database']}"
        )
