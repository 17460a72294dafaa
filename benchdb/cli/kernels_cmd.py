"""``benchdb kernels``: every kernel benchdb knows, where it comes from, and what is measured."""

from __future__ import annotations

from rich.markup import escape

from ..errors import NoDatabase, UserError
from .common import DbOption, HostOption, JsonOption, MachineOption, emit, err_console, open_db

COLUMNS = [
    ("name", "kernel", None),
    ("origin", "origin", None),
    ("version", "version", lambda v: v[:8]),
    ("counts", "flop/ld/st", None),
    ("measured", "points here", None),
    ("source", "source", None),
]


def kernels(
    machine: MachineOption = None,
    host: HostOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """List the built-in kernels, the installed plugins' and every kernel in the database.

    For each version of each kernel: where it comes from (builtin, plugin,
    program), the version hash (a user's changed code is a new version), the
    reference flops, loads and stores it counts per point, how many valid (and
    invalid) points are measured on this machine's node class (or --machine's,
    or on --host), and its spec file or plugin
    (--json adds the family, arrays and description).  Without a database
    yet, it lists what can be collected and says so.  A plugin
    that fails to import is reported on stderr and left out.

    Examples:

      benchdb kernels

      benchdb kernels --machine node17 --json

      benchdb kernels --host node17
    """
    from ..db.scope import Scope, read_scope
    from ..kernel_defs import kernel_summaries
    from ..kernels.api import KernelError
    from ..kernels.registry import BUILTIN
    from ..kernels.sources import installed_plugins, load_entry_point

    available = BUILTIN.kernels()
    for ep in installed_plugins():
        try:
            available += [k for b in load_entry_point(ep) for k in b.kernels]
        except KernelError as exc:
            err_console.print(f"[yellow]warning:[/] {exc}", highlight=False, soft_wrap=True)
    scope: Scope | None = None
    try:
        database = open_db(db)
    except NoDatabase as missing:  # nothing stored yet: list what can be collected, and say so
        if machine is not None or host is not None:
            raise
        err_console.print(f"note: {escape(str(missing))}", highlight=False, soft_wrap=True)
        database = None
    if database is not None:
        try:
            scope = read_scope(database, machine, host)
        except UserError:
            if machine is not None or host is not None:
                raise  # this machine's class has measured nothing yet: no points here
    rows = kernel_summaries(database, scope, available)
    if as_json:
        emit([r.to_json() for r in rows], COLUMNS, as_json=True)
        return
    emit(
        [
            {
                **r.to_json(),
                "counts": f"{r.flops_per_point:g}/{r.loads_per_point:g}/{r.stores_per_point:g}",
                "measured": f"{r.points_here}"
                + (f" +{r.invalid_here} invalid" if r.invalid_here else ""),
                "source": _short(r.source),
            }
            for r in rows
        ],
        COLUMNS,
        as_json=False,
        title=f"kernels in {database.display_url}" if database else "kernels benchdb can collect",
    )


def _short(path: str) -> str:
    """A spec file's path relative to the current folder where that is shorter."""
    import os

    if not path.startswith("/"):
        return path
    relative = os.path.relpath(path)
    return relative if len(relative) < len(path) else path
