"""Thread scaling: speedup per footprint range and the Amdahl parallel fraction.

Seed 004 (DMI HBM report, §6) summarises OpenMP scaling as "Amdahl scaling of
97-98 %": the parallel fraction f in S(n) = 1 / ((1 - f) + f / n).  Here, for
a kernel measured at several thread counts, the speedup at each footprint
measured at both n threads and 1 thread is P_n(x) / P_1(x); per residence
level (each data cache, memory) the median speedup per thread count is
reported, and f is fitted to those medians with ``scipy.optimize.curve_fit``
(bounded to [0, 1]).  Memory-resident sizes usually scale worse than cached
ones -- bandwidth is shared -- which is why the ranges are kept apart.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..db.measurements import machine_rows
from ..errors import UserError
from .basis import RateBasis, rate_basis
from .curve import build_curve
from .source import read_selection, resolve_machine_caches, select_rows

if TYPE_CHECKING:
    from ..db.engine import Database


def amdahl(n: np.ndarray, f: float) -> np.ndarray:
    """Amdahl's speedup on ``n`` threads with parallel fraction ``f``."""
    return 1.0 / ((1.0 - f) + f / np.asarray(n, dtype=float))


def fit_parallel_fraction(threads: np.ndarray, speedup: np.ndarray) -> float | None:
    """Least-squares f in [0, 1]; None without a thread count above one."""
    from scipy.optimize import curve_fit

    threads, speedup = np.asarray(threads, dtype=float), np.asarray(speedup, dtype=float)
    if not (threads > 1).any():
        return None
    (f,), _ = curve_fit(amdahl, threads, speedup, p0=[0.9], bounds=([0.0], [1.0]))
    return float(f)


def thread_scaling(
    db: Database,
    kernel: str,
    *,
    precision: str = "float64",
    machine: str | None = None,
    host: str | None = None,
    environment_id: int | None = None,
    context: str | None = None,
    basis: RateBasis | None = None,
) -> dict[str, Any]:
    """Speedup over 1 thread per level and thread count, and Amdahl's f per level
    (``basis``: the kernel's :func:`rate_basis` at ``precision``, where the caller has it)."""
    if basis is None:  # unknown kernel/precision: fail before any query
        basis = rate_basis(kernel, precision, db)
    mc = resolve_machine_caches(db, machine, host)
    base = read_selection(
        db,
        mc,
        kernel,
        threads=1,
        precision=precision,
        environment_id=environment_id,
        context=context,
    )
    if not base.other_threads:
        raise UserError(
            f"{kernel} was measured with 1 thread only; collect more thread counts, e.g. "
            f"`benchdb collect --kernels {kernel} --threads 1,2`"
        )
    basis = basis.of_version(base.kernel_version, db)
    ref = build_curve(base.rows, basis.work_per_point, basis.geometry)
    names = [n for n, _ in mc.level_capacities()]
    per: dict[int, dict[int, list[float]]] = {}
    rows = machine_rows(
        db, mc.scope, kernels=[kernel], precision=precision, environment_id=base.environment_id
    )
    for t in base.other_threads:
        sel = select_rows(
            rows,
            mc,
            kernel,
            threads=t,
            precision=precision,
            environment_id=base.environment_id,
            context=base.context,
            kernel_version=base.kernel_version,
        )
        cur = build_curve(sel.rows, basis.work_per_point, basis.geometry)
        common, i_ref, i_cur = np.intersect1d(ref.footprint, cur.footprint, return_indices=True)
        speed = cur.rate[i_cur] / ref.rate[i_ref]
        for lvl, s in zip(mc.level_of(common), speed, strict=True):
            per.setdefault(int(lvl), {}).setdefault(t, []).append(float(s))
    ranges = []
    for lvl in sorted(per):
        med = {t: float(np.median(v)) for t, v in sorted(per[lvl].items())}
        ts = np.array([1, *med])
        ss = np.array([1.0, *med.values()])
        ranges.append(
            {
                "level": names[lvl],
                "speedup": {str(t): s for t, s in med.items()},
                "footprints": {str(t): len(v) for t, v in per[lvl].items()},
                "parallel_fraction": fit_parallel_fraction(ts, ss),
            }
        )
    return {
        "kernel": kernel,
        **mc.scope.to_dict(),
        "environment_id": base.environment_id,
        "context": base.context,
        "threads": [1, *base.other_threads],
        "ranges": ranges,
    }
