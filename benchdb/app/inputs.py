"""Turning command-line choices into model inputs: communication and power parameters.

Communication parameters come from a machine file (``--machine-file``: a
path or a bundled name, :func:`benchdb.comm.params.load_machine_file`) or
from the fitted communication models of a node class in the database.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..comm.params import CommParams, load_machine_file
from ..errors import UserError
from .energy import PowerModel, load_power_file

if TYPE_CHECKING:
    from ..db.engine import Database


def comm_params(
    db: Database,
    machine_file: str | None,
    machine: str | None,
    host: str | None = None,
    *,
    needed: bool = True,
) -> CommParams | None:
    """The machine file's parameters, else the database's fitted ones of ``machine``'s
    node class (or of ``host``'s runs).

    ``needed=False`` (every case runs on one rank): None unless a file is given.
    """
    if machine_file:
        return load_machine_file(machine_file)
    if not needed:
        return None
    from ..comm.store import load_params

    return load_params(db, machine, host)


def power_model(
    power_file: Path | None,
    core_busy_w: float | None,
    core_idle_w: float | None,
    package_idle_w: float | None,
    dram_w: float | None,
) -> PowerModel | None:
    """A power model from ``--power-file`` or the ``--*-w`` options (options win)."""
    given = {
        k: v
        for k, v in {
            "core_busy_w": core_busy_w,
            "core_idle_w": core_idle_w,
            "package_idle_w": package_idle_w,
            "dram_w": dram_w,
        }.items()
        if v is not None
    }
    base = load_power_file(power_file).to_dict() if power_file else {}
    merged = {**base, **given}
    if not merged:
        return None
    if "core_busy_w" not in merged:
        raise UserError("power parameters need --core-busy-w (watts per busy core)")
    return PowerModel(**merged)
