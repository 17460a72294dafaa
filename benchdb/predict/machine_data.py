"""All of one machine's measured curves at one thread count and precision.

The analytic baselines are fitted per machine across kernels (paper 003 eq. 5)
or from the STREAM sweeps (roofline), so they need every kernel's curve, not
just the one being predicted; cache capacities place each footprint in the
level it resides in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..db.engine import Database
from ..db.measurements import machine_rows, widest_environment
from ..errors import UserError
from .basis import RateBasis, rate_basis
from .curve import Curve, build_curve
from .source import MachineCaches, Selection, select_rows


@dataclass(frozen=True)
class KernelCurve:
    basis: RateBasis
    curve: Curve
    selection: Selection

    @property
    def context(self) -> str:
        return self.selection.context

    @property
    def byte_rate(self) -> np.ndarray:
        """The curve's rates as bytes/s (STREAM counting)."""
        return self.curve.rate / self.basis.work_per_point * self.basis.bytes_per_point


@dataclass(frozen=True)
class MachineData:
    machine: MachineCaches
    threads: int
    precision: str
    environment_id: int
    curves: dict[str, KernelCurve]

    def level_capacities(self) -> list[tuple[str, float]]:
        return self.machine.level_capacities()

    def level_of(self, footprint: np.ndarray) -> np.ndarray:
        return self.machine.level_of(footprint)


def machine_data(
    db: Database,
    rows: Sequence[dict[str, Any]],
    machine: MachineCaches,
    *,
    threads: int,
    precision: str,
    environment_id: int,
    run_ids: Sequence[int] | None = None,
) -> MachineData:
    """Curves of every kernel in ``rows`` (of ``run_ids``) at ``threads``/``precision``
    in environment ``environment_id`` (:func:`benchdb.db.measurements.widest_environment`
    where the user names none); ``db`` defines the user kernels among them
    (:mod:`benchdb.kernel_defs`)."""
    pool = [r for r in rows if r["precision"] == precision]
    if run_ids is not None:
        wanted = set(run_ids)
        pool = [r for r in pool if r["run_id"] in wanted]
    if not pool:
        raise UserError(f"no {precision} measurements on {machine.scope.label}")
    env = environment_id
    curves: dict[str, KernelCurve] = {}
    for kernel in sorted({r["kernel"] for r in pool}):
        try:
            sel = select_rows(
                pool,
                machine,
                kernel,
                threads=threads,
                precision=precision,
                environment_id=env,
            )
            basis = rate_basis(kernel, precision, db, sel.kernel_version)
        except UserError:
            continue  # no data at these settings, or a kernel no longer defined
        if sel.rows:
            curves[kernel] = KernelCurve(
                basis, build_curve(sel.rows, basis.work_per_point, basis.geometry), sel
            )
    return MachineData(machine, threads, precision, env, curves)


def environment_data(
    db: Database,
    machine: MachineCaches,
    *,
    threads: int,
    precision: str,
    environment_id: int | None = None,
) -> MachineData:
    """:func:`machine_data` of the class's widest environment (or ``environment_id``),
    reading that environment's measurements only."""
    if environment_id is None:
        environment_id = widest_environment(db, machine.scope, precision=precision, threads=threads)
    if environment_id is None:
        raise UserError(f"no {precision} measurements on {machine.scope.label}")
    rows = machine_rows(
        db, machine.scope, precision=precision, threads=threads, environment_id=environment_id
    )
    return machine_data(
        db, rows, machine, threads=threads, precision=precision, environment_id=environment_id
    )
