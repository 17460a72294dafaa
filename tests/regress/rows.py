"""Runs written through the ORM for the regression tests.

``add_run`` stores given samples (synthetic sets with known answers); runs timed
for real are ``benchmarks/real_runs.py``'s.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from benchdb.kernels import kernel_info

from benchdb.db.engine import Database
from benchdb.db.models import Measurement
from benchdb.db.repo import register_kernel
from benchdb.db.runs import finish_run, start_run
from benchdb.environment import EnvironmentInfo, detect_environment
from benchdb.machine import MachineInfo, detect_machine
from benchdb.shapes import shape_key
from benchdb.stats import summarize


def other_machine() -> MachineInfo:
    """This machine with another CPU model: another node class, on a host of its own."""
    return dataclasses.replace(detect_machine(), cpu_model="Other CPU 9000", hostname="elsewhere")


def other_environment(**changes: str) -> EnvironmentInfo:
    return dataclasses.replace(detect_environment(), **changes)


def add_run(
    db: Database,
    points: Mapping[tuple[str, tuple[int, ...]], Sequence[float]],
    *,
    tags: Sequence[str] = (),
    machine: MachineInfo | None = None,
    environment: EnvironmentInfo | None = None,
    kind: str = "kernels",
    config: Mapping[str, Any] | None = None,
    context: str = "isolated",
) -> int:
    """A complete run holding ``{(kernel, shape): samples}`` (seconds per repetition);
    by default a kernel collection (``kind``) with empty settings (``config``)."""
    run = start_run(
        db,
        kind=kind,
        config=dict(config or {}),
        tags=list(tags),
        machine=machine,
        environment=environment,
    )
    with db.session() as s:
        for (kernel, shape), samples in points.items():
            info = kernel_info(kernel)
            st = summarize(samples)
            s.add(
                Measurement(
                    run_id=run.id,
                    kernel_id=register_kernel(s, info).id,
                    shape=list(shape),
                    shape_key=shape_key(shape),
                    points=int(sum(shape)),
                    footprint_bytes=8 * int(sum(shape)) * info.arrays,
                    context=context,
                    repetitions=10,
                    samples=list(samples),
                    t_min=st.t_min,
                    t_median=st.t_median,
                    t_iqr=st.t_iqr,
                    t_cv=st.t_cv,
                    flags=["noisy"] if st.noisy else [],
                )
            )
    finish_run(db, run.id, "complete")
    return run.id
