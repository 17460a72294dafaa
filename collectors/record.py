"""Turning one point's timing into ``measurement`` rows, valid or not.

A point's first pass creates its rows; later passes append their samples
(:func:`add_pass`).  Rates derive from the median time per repetition over
all samples: flop/s from the kernel's
reference flops per point (paper 003, Table I), B/s from its loads and
stores per point (STREAM counting).  A kernel with no flops (a copy) or no
counted traffic (the halo updates) gets no rate of that kind.

Validity (docs/design.md, "Collect-time verification"): a point is valid only if
every pass of it ran, its checksum is finite and the same in every pass, and
its median time is positive.  Anything else is stored, with the reason in
``flags``, and never used by ``predict``.  ``noisy`` and ``disturbed`` are the
flags that are not reasons: they are recomputed from the pooled samples and
leave the point valid.

Disturbed samples (:mod:`benchdb.evidence`) are kept apart: ``samples`` holds
the clean ones, which every statistic and every reader of the samples uses, with
their evidence beside them in ``evidence`` (a list per field); ``set_aside``
holds the disturbed ones (``t_s``), their passes and their evidence the same
way, with the samples of an A/B pair whose other side was disturbed
(``unpaired``: ``benchdb ab`` retakes both; kept, and marked so in ``evidence``,
where no sample ran clean).  A point whose passes together got
fewer clean samples than a pass asks for is flagged ``disturbed``; one with no
clean sample at all keeps every sample in ``samples`` (its median then stands for
what was measured, flagged).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from benchdb.app.context import FULLSTEP, PROGRAM
from benchdb.db.point_rows import PointRow
from benchdb.evidence import (
    Evidence,
    from_columns,
    kept_and_set_aside,
    set_aside_count,
    to_columns,
)
from benchdb.predict.noise import pass_sizes
from benchdb.shapes import shape_key
from benchdb.stats import summarize
from benchdb.verdicts import Flag

from ..kernels.api import KernelInfo
from .plan import Point
from .timing import PointTiming

CONTEXT_FULLSTEP = FULLSTEP  # the shallow loops, timed inside the whole time step
CONTEXT_ISOLATED = "isolated"  # a micro-kernel repeated on its own
CONTEXT_PROGRAM = PROGRAM  # a user's program, timed by its own timers inside its step

NOISY = Flag.NOISY
DISTURBED = Flag.DISTURBED
NONPOSITIVE = "nonpositive_time"
# recomputed with every pass; the rest are reasons
STATISTICS_FLAGS = (NOISY, DISTURBED, NONPOSITIVE)
CHECKSUM_RTOL = 1e-12  # a point's passes run the same code on the same data


def context_of(point: Point, info: KernelInfo) -> str:
    if info.origin == "program":
        return CONTEXT_PROGRAM
    return CONTEXT_FULLSTEP if point.benchmark == "shallow" else CONTEXT_ISOLATED


def _rate(per_point: float, points: int, seconds: float) -> float | None:
    return per_point * points / seconds if per_point > 0 and seconds > 0 else None


def _reasons(row: PointRow) -> list[str]:
    return [f for f in row.flags or [] if f not in STATISTICS_FLAGS]


@dataclass(frozen=True)
class _Taken:
    """A sample (seconds per repetition), its evidence (None: not read), its pass, and
    whether it lost its A/B partner to a disturbance."""

    t: float
    evidence: Evidence | None
    pass_index: int
    unpaired: bool = False

    @property
    def clean(self) -> bool:
        return not self.unpaired and (self.evidence is None or not self.evidence.disturbed)


def _kept_passes(row: PointRow) -> list[int]:
    """The pass of each of ``row.samples`` (:func:`~benchdb.predict.noise.pass_sizes`)."""
    sizes = pass_sizes(len(row.samples or []), row.passes or 1, row.pass_counts)
    return [i for i, c in enumerate(sizes) for _ in range(c)]


def _taken(row: PointRow) -> list[_Taken]:
    """Every sample the row holds, kept or set aside."""
    samples = list(row.samples or [])
    kept = zip(
        samples,
        from_columns(row.evidence, len(samples)),
        _kept_passes(row),
        (row.evidence or {}).get("unpaired") or [False] * len(samples),
        strict=True,
    )
    aside = row.set_aside or {}
    n = set_aside_count(aside)
    aside_taken = (
        zip(
            aside.get("t_s", []),
            from_columns(aside, n),
            aside.get("pass", []),
            aside.get("unpaired") or [False] * n,
            strict=True,
        )
        if n
        else ()
    )
    return [_Taken(*k) for k in kept] + [_Taken(*a) for a in aside_taken]


def _unpaired(taken: list[_Taken]) -> dict[str, list[bool]]:
    """``{"unpaired": [...]}`` beside the evidence of ``taken`` where any is; else ``{}``."""
    return {"unpaired": [t.unpaired for t in taken]} if any(t.unpaired for t in taken) else {}


def _summarise_into(row: PointRow, taken: list[_Taken], info: KernelInfo, wanted: int = 0) -> None:
    """Set ``row``'s samples, statistics, rates, validity and flags from ``taken``: the
    clean samples when there are any; ``disturbed`` when fewer than ``wanted`` are."""
    reasons = _reasons(row)
    keep, set_aside = kept_and_set_aside([t.clean for t in taken])
    clean = sum(taken[i].clean for i in keep)
    kept = sorted((taken[i] for i in keep), key=lambda t: t.pass_index)  # stable, by pass
    samples = [t.t for t in kept]
    row.samples = samples
    row.evidence = {**to_columns([t.evidence for t in kept]), **_unpaired(kept)}
    row.pass_counts = [sum(t.pass_index == p for t in kept) for p in range(row.passes + 1)]
    aside = [taken[i] for i in set_aside]
    row.set_aside = (
        {
            "t_s": [t.t for t in aside],
            "pass": [t.pass_index for t in aside],
            **to_columns([t.evidence for t in aside]),
            **_unpaired(aside),
        }
        if aside
        else {}
    )
    if not samples:  # no pass has run yet
        row.t_min = row.t_median = row.t_iqr = row.t_cv = 0.0
        row.flop_rate = row.byte_rate = None
        row.valid, row.flags = False, reasons
        return
    st = summarize(samples)
    flags = [NOISY] if st.noisy else []
    if clean < wanted:
        flags.append(DISTURBED)
    if st.t_median <= 0:
        flags.append(NONPOSITIVE)
    row.t_min, row.t_median, row.t_iqr, row.t_cv = st.t_min, st.t_median, st.t_iqr, st.t_cv
    row.flop_rate = _rate(info.flops_per_point, row.points, st.t_median)
    row.byte_rate = _rate(info.bytes_per_point(row.precision), row.points, st.t_median)
    row.valid = not reasons and st.t_median > 0
    row.flags = [*flags, *reasons]


def _checksum_reason(stored: float | None, new: float | None, passes: int) -> str | None:
    """Why the checksum of pass ``passes + 1`` invalidates the point, or None."""
    if new is not None and not math.isfinite(new):
        return "nonfinite_checksum"
    if stored is None or new is None or math.isclose(stored, new, rel_tol=CHECKSUM_RTOL):
        return None
    return f"checksum_mismatch: pass {passes + 1} gave {new!r}, pass 1 {stored!r}"


def new_row(
    run_id: int,
    point: Point,
    points: int,
    info: KernelInfo,
    kernel_id: int,
    placement: str,
    context: str | None = None,
) -> PointRow:
    """An empty row of one kernel at ``point`` (no pass recorded yet); ``context``: the
    timing context, where not the kernel's own (a populated node's curves)."""
    return PointRow(
        run_id=run_id,
        kernel_id=kernel_id,
        shape=list(point.shape),
        shape_key=shape_key(point.shape),
        points=points,
        footprint_bytes=point.footprint_bytes,
        threads=point.threads,
        placement=placement,
        precision=point.precision,
        context=context or context_of(point, info),
        repetitions=0,
        passes=0,
        samples=[],
        evidence={},
        set_aside={},
        pass_counts=[],
        flags=[],
        checksum=None,
    )


def measurement_rows(
    run_id: int,
    point: Point,
    points: Mapping[str, int],
    timing: PointTiming,
    placement: str,
    kernels: Mapping[str, tuple[int, KernelInfo]],
    context: str | None = None,
) -> list[PointRow]:
    """One row per kernel timed at ``point`` (its first pass); ``points``: points per
    repetition by kernel; ``kernels``: name -> (id, info); ``context``: see :func:`new_row`."""
    rows = []
    for name in timing.samples:
        kernel_id, info = kernels[name]
        row = new_row(run_id, point, points[name], info, kernel_id, placement, context)
        add_pass(row, timing, kernels)
        rows.append(row)
    return rows


def failed_rows(
    run_id: int,
    point: Point,
    points: Mapping[str, int],
    reason: str,
    placement: str,
    kernels: Mapping[str, tuple[int, KernelInfo]],
    context: str | None = None,
) -> list[PointRow]:
    """Rows for ``point``'s kernels when its first pass failed: invalid, with ``reason``."""
    rows = []
    for name, n in points.items():
        kernel_id, info = kernels[name]
        row = new_row(run_id, point, n, info, kernel_id, placement, context)
        add_failure(row, reason, kernels)
        rows.append(row)
    return rows


def add_pass(
    row: PointRow, timing: PointTiming, kernels: Mapping[str, tuple[int, KernelInfo]]
) -> None:
    """Add a pass's samples of ``row``'s kernel; statistics over all passes.

    The first pass sets the checksum; a later one must agree with it.
    """
    name, info = _kernel(row, kernels)
    reason = _checksum_reason(row.checksum, timing.checksum, row.passes)
    if not row.samples:  # the first pass that ran
        row.repetitions = timing.repetitions
        if reason is None:
            row.checksum = timing.checksum
    if reason is not None and reason not in (row.flags or []):
        row.flags = [*(row.flags or []), reason]
    samples = timing.samples[name]
    evidence: list[Evidence | None] = list(timing.evidence) or [None] * len(samples)
    unpaired = timing.unpaired or (False,) * len(samples)
    new = [_Taken(t, e, row.passes, u) for t, e, u in zip(samples, evidence, unpaired, strict=True)]
    _summarise_into(row, [*_taken(row), *new], info, timing.wanted)
    row.passes += 1


def add_failure(row: PointRow, reason: str, kernels: Mapping[str, tuple[int, KernelInfo]]) -> None:
    """Record a pass of ``row``'s point that could not be measured: the point is invalid."""
    _, info = _kernel(row, kernels)
    row.flags = [*(row.flags or []), f"failed: pass {row.passes + 1}: {reason}"]
    _summarise_into(row, _taken(row), info)
    row.passes += 1


def _kernel(row: PointRow, kernels: Mapping[str, tuple[int, KernelInfo]]) -> tuple[str, KernelInfo]:
    return next((n, info) for n, (kid, info) in kernels.items() if kid == row.kernel_id)
