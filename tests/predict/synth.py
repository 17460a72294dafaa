"""Synthetic measured curves with known answers, written through the ORM.

A "measurement" here is what the collectors would store for a kernel whose
true rate at footprint x is ``rate_fn(x)``: samples are the exact time per
repetition, spread by a known relative amount, so a test knows both the value
a prediction must return and the uncertainty it must report.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Sequence

import numpy as np
from benchdb.kernels import kernel_info

from benchdb.db.engine import Database
from benchdb.db.models import Measurement
from benchdb.db.repo import register_environment, register_kernel
from benchdb.db.runs import finish_run, start_run
from benchdb.environment import EnvironmentInfo, detect_environment
from benchdb.machine import MachineInfo
from benchdb.predict.basis import rate_basis


def step_curve(peak: float = 4e9, memory: float = 1e9, corner: float = 2e5, width: float = 1.5):
    """A smooth cache step in log footprint: ``peak`` below ``corner``, ``memory`` far above."""

    def rate(x: np.ndarray) -> np.ndarray:
        t = 1 / (1 + np.exp(-(np.log(np.asarray(x, dtype=float)) - np.log(corner)) / width * 4))
        return peak + (memory - peak) * t

    return rate


def add_run(
    db: Database,
    kernel: str,
    shapes: Sequence[tuple[int, ...]],
    rate_fn: Callable[[np.ndarray], np.ndarray],
    *,
    threads: int = 1,
    precision: str = "float64",
    spread: float = 0.02,
    tags: Sequence[str] = (),
    flags_at: dict[tuple[int, ...], list[str]] | None = None,
    scale_at: dict[tuple[int, ...], float] | None = None,
    context: str = "isolated",
    repeat: float | None = None,
    repeat_at: dict[tuple[int, ...], float] | None = None,
    environment: EnvironmentInfo | None = None,
    machine: MachineInfo | None = None,
) -> int:
    """One complete run measuring ``kernel`` at ``shapes``; returns the run id.

    Five samples per point at ``t * (1 + spread * [-1, -0.5, 0, 0.5, 1])``, so the
    relative IQR of the time samples is exactly ``spread``.  ``scale_at``
    multiplies the rate at some shapes (a planted spike or dip).  ``repeat`` (or
    ``repeat_at`` per shape) ``d`` stores two passes instead, of times
    ``t (1 - d)`` and ``t (1 + d)`` (spread 0): the median stays ``t`` and the
    repeat noise between the passes is ``(1 + d) / (1 - d) - 1``.  ``machine``: the
    machine that measured it (default: this one).
    """
    basis = rate_basis(kernel, precision)
    environment = environment or detect_environment()
    run = start_run(
        db,
        kind="kernels",
        config={"synthetic": True},
        tags=list(tags),
        machine=machine,
        environment=environment,
    )
    with db.session() as s:
        register_environment(s, environment)
        k = register_kernel(s, kernel_info(kernel))
        for raw in shapes:
            shape = tuple(int(v) for v in raw)
            arr = np.asarray([shape])
            points, fp = basis.points_and_footprint(arr)
            rate = float(rate_fn(fp)[0]) * (scale_at or {}).get(tuple(shape), 1.0)
            t = float(basis.work_per_point * points[0] / rate)
            d = (repeat_at or {}).get(tuple(shape), repeat)
            if d is None:
                samples, passes = [t * (1 + spread * k) for k in (-1, -0.5, 0, 0.5, 1)], 1
            else:
                samples, passes = [t * (1 - d)] * 5 + [t * (1 + d)] * 5, 2
            s.add(
                Measurement(
                    run_id=run.id,
                    kernel_id=k.id,
                    shape=list(shape),
                    shape_key="x".join(map(str, shape)),
                    points=int(points[0]),
                    footprint_bytes=int(fp[0]),
                    threads=threads,
                    placement="none",
                    precision=precision,
                    context=context,
                    repetitions=10,
                    samples=samples,
                    passes=passes,
                    t_min=min(samples),
                    t_median=t,
                    t_iqr=t * spread if passes == 1 else 2 * t * d,
                    t_cv=0.0,
                    flop_rate=rate,
                    byte_rate=None,
                    checksum=1.0,
                    valid=True,
                    flags=(flags_at or {}).get(tuple(shape), []),
                )
            )
    finish_run(db, run.id, "complete")
    return run.id


def log_linear(x: np.ndarray) -> np.ndarray:
    """Exactly linear in log footprint: ``linear`` predicts it without error."""
    return 5e9 - 2e8 * np.log(np.asarray(x, dtype=float))


def square_sizes(lo: int, hi: int, n: int) -> list[tuple[int, int]]:
    """``n`` square shapes, geometrically spaced from lo x lo to hi x hi (distinct)."""
    sides = sorted({round(float(v)) for v in np.geomspace(lo, hi, n)})
    return [(m, m) for m in sides]


def cli(capsys, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``benchdb`` in this process (the subprocess start costs seconds on a busy
    2-core machine); same exit codes and streams as the console script."""
    from benchdb.cli.app import main

    capsys.readouterr()
    saved, sys.argv = sys.argv, ["benchdb", *args]
    code = 0
    try:
        main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.argv = saved
    out = capsys.readouterr()
    return subprocess.CompletedProcess(list(args), code, out.out, out.err)
