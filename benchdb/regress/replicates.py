"""The run-to-run scatter of unchanged code, measured from the database's replicate runs.

Two collections of the same code, one after the other, differ by more than
their samples say: the host's speed drifts over seconds to minutes (other
tenants of the memory bus and the last-level cache, frequency), and one run's
samples of a point all fall in one of its spells.  A whole run then sits a
few per cent above or below the next at every point of a kernel, and nothing
inside the two runs compared tells that from slower code -- the two-level
bootstrap of :mod:`.hierarchical` resamples points and samples, never runs.

The evidence of that drift is *replicates*: other runs of the baseline's
node class with the baseline's settings (:func:`.pick.settings`), software
environment and, per kernel, code version, so that what differs between two
of them is the host.  Consecutive replicates ``(r_i, r_{i+1})`` give one
kernel-level change each, measured as a comparison measures it: ``d`` = the
median over their common points of ``log(T_{i+1} / T_i)``.  Under no change
the comparison's own log change is one more draw of that difference, so its
spread is ``s = sqrt(mean(d^2))`` over the ``n`` pairs, and a change is told
from the drift at ``1 - alpha`` only beyond ``t_{1-alpha/2, n} * s`` -- the
logic of Conbench's lookback z-score over the history of unchanged results,
with Student's quantile because ``s`` comes from few pairs (its own error
matters: a ratio to an ``s`` of two pairs exceeds the normal 99 % quantile
12 % of the time).  One pair is too few (``t_{0.995,1}`` = 64): at least
:data:`MIN_PAIRS` are needed, else nothing is charged and compare says why.
:func:`charge` adds it to the kernel's bootstrap interval (in quadrature: the
drift is independent of the sampling noise), so a change is called only beyond
both, and ``unchanged`` still means within the user's threshold; a host too
noisy for the threshold asked for gives ``noisy``, said, never hidden.

The contender is never its own evidence (it may be the change under test),
nor is a run newer than both compared (the same change, collected again, has
the contender's version only where the version covers the change); only the
newest :data:`MAX_REPLICATES` replicates count: the host drifts over months too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import islice, pairwise

import numpy as np
from scipy.special import stdtrit
from sqlalchemy.orm import Session

from ..db.engine import Database
from ..db.measurements import measurements_frame
from ..db.run_records import RunRecord, measured_run_records
from ..db.scope import resolve_scope
from .hierarchical import KernelChange
from .pick import settings

MAX_REPLICATES = 10
"""The newest replicate runs that count (9 consecutive pairs)."""

MIN_PAIRS = 2
"""Consecutive replicate pairs a kernel needs before its scatter is charged."""

KernelKey = tuple[str, int, str, str]
"""(kernel, threads, precision, context), as compare's ``KERNEL_KEY``."""


@dataclass(frozen=True)
class RunScatter:
    """One kernel's run-to-run scatter: RMS of its log change over ``pairs`` replicate pairs."""

    log_rms: float
    pairs: int


def replicate_runs(session: Session, baseline: RunRecord, contender: RunRecord) -> list[int]:
    """Ids of the baseline's replicates (itself included), oldest first: never the contender,
    nor a run newer than both (it may hold the change under test again)."""
    wanted = settings(baseline)
    latest = max((baseline.started_at, baseline.id), (contender.started_at, contender.id))
    candidates = (
        run
        for run in measured_run_records(
            session,
            resolve_scope(session, str(baseline.node_class_id)),
            environment_id=baseline.environment_id,
            started_by=latest[0],
        )
        if run.id != contender.id
        and (run.started_at, run.id) <= latest
        and run.environment_id == baseline.environment_id
        and settings(run) == wanted
    )
    newest = list(islice(candidates, MAX_REPLICATES))  # measured_run_records: newest first
    return [run.id for run in reversed(newest)]


def run_scatter(
    db: Database, runs: Sequence[int], versions: Mapping[str, str]
) -> dict[KernelKey, RunScatter]:
    """Per kernel configuration, the scatter between consecutive ``runs`` (oldest first),
    counting only points measured with the kernel's version in ``versions``.

    It reads the runs' medians alone (no per-sample evidence) into one table, a row per
    point and a column per run, and takes each kernel's rows by position: a pivot table
    per kernel cost more than the rest of ``compare`` (docs/findings/ab-comparison.md,
    "At a year of history")."""
    if len(runs) < 2:
        return {}
    frame = measurements_frame(db, run_ids=list(runs), valid_only=True, with_evidence=False)
    frame = frame[frame["kernel_version"] == frame["kernel"].map(versions)]
    if frame.empty:
        return {}
    key = ["kernel", "threads", "precision", "context"]
    medians = frame.pivot_table(
        index=[*key, "shape_key"], columns="run_id", values="t_median", aggfunc="first"
    )
    medians = medians[[r for r in runs if r in medians.columns]]
    table = medians.to_numpy(dtype=float)
    changes = {
        kernel_key: _consecutive_changes(table[rows])
        for kernel_key, rows in medians.groupby(level=key, sort=False).indices.items()
    }
    return {
        k: RunScatter(log_rms=float(np.sqrt(np.mean(np.square(d)))), pairs=len(d))
        for k, d in changes.items()
        if len(d) >= MIN_PAIRS
    }


def _consecutive_changes(medians: np.ndarray) -> list[float]:
    """One kernel's change between consecutive runs that measured it (``medians``: a row
    per point, a column per run, oldest first, NaN where a run lacks the point): the median
    over the points both measured of ``log(after / before)``."""
    measured = medians[:, ~np.isnan(medians).all(axis=0)]
    changes = []
    for before, after in pairwise(measured.T):
        both = ~np.isnan(before) & ~np.isnan(after)
        if both.any():
            changes.append(float(np.median(np.log(after[both] / before[both]))))
    return changes


def charge(change: KernelChange, scatter: RunScatter, alpha: float) -> KernelChange:
    """``change`` with its interval widened by the run-to-run scatter: each side's log
    half-width and ``t_{1-alpha/2, pairs} * s`` added in quadrature (independent errors)."""
    centre = np.log(change.ratio)
    drift = float(stdtrit(scatter.pairs, 1 - alpha / 2)) * scatter.log_rms
    low = centre - np.hypot(centre - np.log(change.ci_low), drift)
    high = centre + np.hypot(np.log(change.ci_high) - centre, drift)
    return replace(change, ci_low=float(np.exp(low)), ci_high=float(np.exp(high)))
