"""The repeat noise of a measured point: how far measuring it again moves it.

A prediction is checked against a measurement, and a measurement repeated
moves by itself (docs/findings/lookup-layers.md has a shared host's figures).  No
prediction can be *shown* to be better than that, so the error of a
prediction means something only beside it: error / noise near 1 is at the
floor, well above 1 is what the model can still win.

Definition.  A point's independent repeats are, in time order, the medians of
its passes (``benchdb collect`` measures each point in ``--passes`` passes,
minutes apart; the samples of a pass are stored one after the other, so a
row's ``samples`` split into ``passes`` equal parts) and of the same shape in
other runs.  Its noise is the median over consecutive repeats ``a, b`` of
``|T_b / T_a - 1|`` -- the floor of ``benchmarks/heldout.py``, the same
quantity, so the two agree.  Repeats minutes apart see the host's load come and
go, which is what a later measurement meets; the spread of samples taken back
to back does not.  Only where a point has a single pass in a single run are
its samples split in halves (first against second) instead, marked ``samples``:
a lower bound, since the halves share one spell of the host.

Test-retest.  What a user meets who collects the same shape again later is the
scatter between *collections*: each run's figure for the point (its median, the
value ``predict`` reads) against the next run's.  Passes of one collection share
its set-up, its compiled code and often one spell of the host; separate
collections minutes or hours apart do not, so their scatter is the floor a
prediction of a new measurement is judged against.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np

from ..validity import samples_pruned


class NoiseBasis(StrEnum):
    """What the repeats of a point were."""

    PASSES = "passes"  # passes and/or runs: repeats minutes apart
    SAMPLES = "samples"  # one pass only: its two halves (a lower bound)
    RUNS = "runs"  # separate collections: the test-retest floor


@dataclass(frozen=True)
class RepeatNoise:
    """One point's repeat noise (see the module docstring)."""

    rel: float  # median |T_b / T_a - 1| over consecutive repeats
    basis: NoiseBasis
    repeats: int


def pass_sizes(n: int, passes: int, counts: Sequence[int] | None) -> list[int]:
    """How many of a row's ``n`` samples each of its passes holds, in order: its
    ``pass_counts`` (each pass keeps its clean samples); rows from before that hold
    equal shares; one group where the split is unknown."""
    sizes = [int(c) for c in counts or []]
    if sizes and sum(sizes) == n:
        return sizes
    if passes > 1 and n >= passes and n % passes == 0:
        return [n // passes] * passes
    return [n]


def pass_medians(row: Mapping[str, Any]) -> list[float]:
    """The median of each pass's samples of a measurement row, in order
    (:func:`pass_sizes`); a row whose samples were pruned keeps only its overall median,
    one repeat."""
    if samples_pruned(row):
        return [float(row["t_median"])]
    samples = np.asarray(row["samples"] or [], dtype=float)
    sizes = pass_sizes(len(samples), int(row.get("passes") or 1), row.get("pass_counts"))
    bounds = np.cumsum([0, *sizes])
    return [float(np.median(samples[a:b])) for a, b in itertools.pairwise(bounds) if b > a]


def repeat_noise(rows: Sequence[Mapping[str, Any]]) -> RepeatNoise | None:
    """The repeat noise of the measurements ``rows`` of one point (ordered by id, as
    stored); None where there is nothing to compare (fewer than two samples)."""
    medians = [m for row in rows for m in pass_medians(row)]
    basis = NoiseBasis.PASSES
    if len(medians) < 2:
        samples = np.asarray(rows[0]["samples"] if rows else [], dtype=float)
        if len(samples) < 2:
            return None
        half = len(samples) // 2
        medians = [float(np.median(samples[:half])), float(np.median(samples[half:]))]
        basis = NoiseBasis.SAMPLES
    m = np.asarray(medians)
    return RepeatNoise(float(np.median(np.abs(m[1:] / m[:-1] - 1.0))), basis, len(medians))


def retest_noise(rows: Sequence[Mapping[str, Any]]) -> RepeatNoise | None:
    """The test-retest scatter of the measurements ``rows`` of one point: the median
    over consecutive runs (by run id) of ``|m_b / m_a - 1|``, ``m`` a run's median of
    the point (the median of its rows' medians where a run holds several); None
    unless two runs measured it."""
    by_run: dict[int, list[float]] = {}
    for row in rows:
        by_run.setdefault(int(row["run_id"]), []).append(float(row["t_median"]))
    medians = np.array([np.median(by_run[r]) for r in sorted(by_run)])
    if len(medians) < 2:
        return None
    rel = float(np.median(np.abs(medians[1:] / medians[:-1] - 1.0)))
    return RepeatNoise(rel, NoiseBasis.RUNS, len(medians))


@dataclass(frozen=True)
class AgainstNoise:
    """Errors of a set of points beside their repeat noise, in %.

    The ratios divide the error's statistic by the noise's same statistic (median
    by median, p90 by p90), the form of a target such as "within 1.3x the repeat
    noise in median and p90"; a per-point ratio would explode wherever two repeats
    happen to agree closely.
    """

    n: int  # points with a repeat noise
    noise_median_pct: float | None
    noise_p90_pct: float | None
    ratio_median: float | None  # median |error| / median noise
    ratio_p90: float | None  # p90 |error| / p90 noise
    basis: str  # passes, samples, mixed, or none

    @classmethod
    def of(cls, errors_pct: Sequence[float], noise: Sequence[RepeatNoise | None]) -> AgainstNoise:
        """``errors_pct`` and ``noise`` are per point, in the same order."""
        pairs = [(abs(e), n) for e, n in zip(errors_pct, noise, strict=True) if n is not None]
        if not pairs:
            return cls(0, None, None, None, None, "none")
        err = np.array([e for e, _ in pairs])
        rel = 100.0 * np.array([n.rel for _, n in pairs])
        bases = {n.basis.value for _, n in pairs}
        med, p90 = float(np.median(rel)), float(np.percentile(rel, 90))
        return cls(
            len(pairs),
            med,
            p90,
            float(np.median(err)) / med if med > 0 else None,
            float(np.percentile(err, 90)) / p90 if p90 > 0 else None,
            bases.pop() if len(bases) == 1 else "mixed",
        )
