"""Turning one point's timing into ``measurement`` rows.

Rates derive from the median time per repetition: flop/s from the kernel's
reference flops per point (paper 003, Table I), B/s from its loads and
stores per point (STREAM counting).  A kernel with no flops (a copy) or no
counted traffic (the halo updates) gets no rate of that kind.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from benchdb.db.models import Measurement
from benchdb.query import shape_key
from benchdb.stats import summarize

from ..kernels.api import KernelInfo
from .plan import Point
from .timing import PointTiming

CONTEXT_FULLSTEP = "fullstep"  # the shallow loops, timed inside the whole time step
CONTEXT_ISOLATED = "isolated"  # a micro-kernel repeated on its own


def context_of(point: Point) -> str:
    return CONTEXT_FULLSTEP if point.benchmark == "shallow" else CONTEXT_ISOLATED


def _rate(per_point: float, points: int, seconds: float) -> float | None:
    return per_point * points / seconds if per_point > 0 and seconds > 0 else None


def measurement_rows(
    run_id: int,
    point: Point,
    points: int,
    timing: PointTiming,
    placement: str,
    kernels: Mapping[str, tuple[int, KernelInfo]],
) -> list[Measurement]:
    """One row per kernel timed at ``point``; ``kernels`` maps name -> (kernel id, info)."""
    checksum_ok = math.isfinite(timing.checksum)
    rows = []
    for name, samples in timing.samples.items():
        kernel_id, info = kernels[name]
        st = summarize(samples)
        flags = ["noisy"] if st.noisy else []
        if st.t_median <= 0:
            flags.append("nonpositive_time")
        if not checksum_ok:
            flags.append("nonfinite_checksum")
        rows.append(
            Measurement(
                run_id=run_id,
                kernel_id=kernel_id,
                shape=list(point.shape),
                shape_key=shape_key(point.shape),
                points=points,
                footprint_bytes=point.footprint_bytes,
                threads=point.threads,
                placement=placement,
                precision=point.precision,
                context=context_of(point),
                repetitions=timing.repetitions,
                samples=samples,
                t_min=st.t_min,
                t_median=st.t_median,
                t_iqr=st.t_iqr,
                t_cv=st.t_cv,
                flop_rate=_rate(info.flops_per_point, points, st.t_median),
                byte_rate=_rate(info.bytes_per_point(point.precision), points, st.t_median),
                checksum=timing.checksum if checksum_ok else None,
                valid=checksum_ok and st.t_median > 0,
                flags=flags,
            )
        )
    return rows
