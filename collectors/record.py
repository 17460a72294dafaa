"""Turning one point's timing into ``measurement`` rows.

A point's first pass creates its rows; later passes append their samples
(:func:`add_pass`).  Rates derive from the median time per repetition over
all samples: flop/s from the kernel's
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


def _summarise_into(
    row: Measurement, samples: list[float], info: KernelInfo, checksum_ok: bool
) -> None:
    """Set ``row``'s samples, statistics, rates, validity and flags from ``samples``."""
    st = summarize(samples)
    flags = ["noisy"] if st.noisy else []
    if st.t_median <= 0:
        flags.append("nonpositive_time")
    if not checksum_ok:
        flags.append("nonfinite_checksum")
    row.samples = samples
    row.t_min, row.t_median, row.t_iqr, row.t_cv = st.t_min, st.t_median, st.t_iqr, st.t_cv
    row.flop_rate = _rate(info.flops_per_point, row.points, st.t_median)
    row.byte_rate = _rate(info.bytes_per_point(row.precision), row.points, st.t_median)
    row.valid = checksum_ok and st.t_median > 0
    row.flags = flags


def measurement_rows(
    run_id: int,
    point: Point,
    points: int,
    timing: PointTiming,
    placement: str,
    kernels: Mapping[str, tuple[int, KernelInfo]],
) -> list[Measurement]:
    """One new row per kernel timed at ``point`` (first pass); ``kernels``: name -> (id, info)."""
    checksum_ok = math.isfinite(timing.checksum)
    rows = []
    for name, samples in timing.samples.items():
        kernel_id, info = kernels[name]
        row = Measurement(
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
            passes=1,
            checksum=timing.checksum if checksum_ok else None,
        )
        _summarise_into(row, list(samples), info, checksum_ok)
        rows.append(row)
    return rows


def add_pass(
    row: Measurement, timing: PointTiming, kernels: Mapping[str, tuple[int, KernelInfo]]
) -> None:
    """Append a later pass's samples of ``row``'s kernel; statistics over all passes.

    A non-finite checksum in any pass invalidates the point.
    """
    name = next(n for n, (kid, _) in kernels.items() if kid == row.kernel_id)
    checksum_ok = row.checksum is not None and math.isfinite(timing.checksum)
    _summarise_into(row, [*row.samples, *timing.samples[name]], kernels[name][1], checksum_ok)
    row.passes += 1
