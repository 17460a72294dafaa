"""Judging an A/B pair of runs (``benchdb ab``) from its paired samples.

The two runs of a pair hold the same points, and at each point their kept samples
pair by index: sample *i* of the change was taken next to sample *i* of the base
(one after the other in a shuffled order, or both at once on two cores;
:mod:`benchdb.collectors.ab.pairing`).  Load from other processes, frequency
changes and the host's drift hit both halves of a pair alike, so the unit of
evidence is the pair's ratio change / base, not either side's samples apart.

Each point is measured in several trials, each side preparing the point afresh
for each (:mod:`benchdb.collectors.ab.pairing`): the pairs of one trial share where
its arrays landed in memory, which moves the time of the same code by several
percent, so a trial's ratio is the median of its pairs' ratios and the trials are
the point's replicates.  Per kernel (threads, precision, context), over its
points: the median over points of the median trial ratio, with a 99 % interval
from a two-level bootstrap that resamples the points and, within each, the trials
(:func:`~benchdb.regress.hierarchical.paired_change`).  The verdict is
:func:`~benchdb.regress.compare.band_verdict`'s with the threshold (3 % by default):
``slower`` when the interval lies above 1 and the ratio beyond the threshold,
``faster`` alike below, ``unchanged`` when the interval lies inside the band,
``noisy`` otherwise.  Pairing is what lets a 3 % threshold hold: two separate runs on
a shared host differ by 5-15 % with unchanged code
(docs/findings/regression-detection.md), two sides of one pair by far less
(docs/findings/ab-comparison.md).

A point flagged ``disturbed`` on either side (left short of clean pairs: fewer than
one trial asks for, over all its trials) counts with the clean pairs it has.  A
kernel with fewer than :data:`MIN_POINTS` points whose pairs ran clean (their rows
keep every sample) is judged from all its points, disturbed pairs included, and
may be called ``slower`` or ``faster`` only
beyond the threshold *plus* the median share of its time a sample lost to other
tasks (:mod:`benchdb.evidence`): a change too large for the disturbance to
explain (``NUMBA_OPT=0`` on a busy host).  Else it is ``disturbed``, as is one
with fewer than :data:`MIN_REPLICATES` trials: the host was too busy to say,
which fails nothing.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from ..db.engine import Database
from ..db.measurements import measurements_frame
from ..db.prune import require_samples
from ..evidence import LOST_FRACTION, from_columns
from ..predict.noise import pass_sizes
from ..verdicts import MOVED, Flag, Verdict
from .ab import DEFAULT_ALPHA
from .compare import band_verdict
from .hierarchical import paired_change

AB_THRESHOLD = 0.03
"""Smallest change ``benchdb ab`` reports: pairs resolve less than separate runs do."""

KERNEL_KEY = ("kernel", "threads", "precision", "context")
MIN_REPLICATES = 2
"""Trials a kernel needs to be judged: one alone gives no interval."""
MIN_POINTS = 2
"""Clean points a kernel needs to be judged from them alone (fewer where it has fewer):
the interval's width comes from the points' disagreement, which is what shows where
each side's process put its code and data (:func:`.hierarchical.paired_change`), and
one point's trials alone do not (docs/findings/ab-comparison.md)."""


@dataclass(frozen=True)
class PairedPoint:
    """One point's kept samples on both sides (seconds per repetition), in pair order."""

    kernel: str
    threads: int
    precision: str
    context: str
    shape_key: str
    footprint_bytes: int
    base: tuple[float, ...]
    change: tuple[float, ...]
    trials: tuple[int, ...]  # kept pairs per trial, in order
    disturbed: bool  # either side left short of clean pairs
    lost: float = 0.0  # median over pairs of the larger share of its time a side lost

    @property
    def clean(self) -> bool:
        """Whether its kept pairs ran undisturbed (a point with none keeps every pair)."""
        return self.lost <= LOST_FRACTION

    @property
    def pairs(self) -> int:
        return min(len(self.base), len(self.change))

    def trial_ratios(self) -> np.ndarray:
        """Per trial, the median of its pairs' ratios change / base."""
        ratios = np.asarray(self.change[: self.pairs]) / np.asarray(self.base[: self.pairs])
        bounds = np.minimum(np.cumsum([0, *self.trials]), self.pairs)
        return np.array([np.median(ratios[lo:hi]) for lo, hi in pairwise(bounds) if hi > lo])


@dataclass(frozen=True)
class KernelVerdict:
    """A kernel's change (change / base) over its points, and what it means."""

    kernel: str
    threads: int
    precision: str
    context: str
    points: int
    pairs: int
    ratio: float
    ci_low: float
    ci_high: float
    verdict: Verdict  # DISTURBED: not judged
    disturbed_points: int


@dataclass(frozen=True)
class AbJudgement:
    """Every kernel of a pair of runs, judged at ``threshold`` with ``confidence``."""

    base_run: int
    change_run: int
    threshold: float
    confidence: float
    kernels: tuple[KernelVerdict, ...]
    invalid_points: int  # points left out: invalid on either side

    @property
    def slower(self) -> tuple[KernelVerdict, ...]:
        return tuple(k for k in self.kernels if k.verdict == Verdict.SLOWER)


def _lost(base: dict, change: dict) -> float:
    """The median over a point's kept pairs of the larger lost share of its two samples."""
    shares = [
        [0.0 if e is None or not e.wall_s else e.lost_s / e.wall_s for e in kept]
        for kept in (from_columns(r["evidence"], len(r["samples"])) for r in (base, change))
    ]
    n = min(len(s) for s in shares)
    return float(np.median(np.maximum(shares[0][:n], shares[1][:n]))) if n else 0.0


def paired_points(db: Database, base_run: int, change_run: int) -> tuple[list[PairedPoint], int]:
    """The points both runs hold valid, with their samples; and how many were left out
    as invalid on either side (a failed point, a checksum that differs)."""
    frame = measurements_frame(db, run_ids=[base_run, change_run])
    key = [*KERNEL_KEY, "shape_key"]
    sides = {
        run: {
            tuple(row[k] for k in key): row
            for row in frame[frame["run_id"] == run].to_dict("records")
        }
        for run in (base_run, change_run)
    }
    points, invalid = [], 0
    for k, base in sides[base_run].items():
        change = sides[change_run].get(k)
        if change is None:
            continue
        if not (base["valid"] and change["valid"]):
            invalid += 1
            continue
        points.append(
            PairedPoint(
                *k[:4],
                shape_key=k[4],
                footprint_bytes=int(base["footprint_bytes"]),
                base=tuple(base["samples"]),
                change=tuple(change["samples"]),
                trials=tuple(pass_sizes(len(base["samples"]), base["passes"], base["pass_counts"])),
                disturbed=Flag.DISTURBED in base["flags"] or Flag.DISTURBED in change["flags"],
                lost=_lost(base, change),
            )
        )
    return points, invalid


def judge(
    points: list[PairedPoint], threshold: float = AB_THRESHOLD, alpha: float = DEFAULT_ALPHA
) -> list[KernelVerdict]:
    """Each kernel's verdict over its points (module docstring)."""
    groups: dict[tuple, list[PairedPoint]] = defaultdict(list)
    for p in points:
        groups[(p.kernel, p.threads, p.precision, p.context)].append(p)
    verdicts = []
    for (kernel, threads, precision, context), every in groups.items():
        clean = [p for p in every if p.clean]
        enough = len(clean) >= min(MIN_POINTS, len(every))
        pts = clean if enough else every
        margin = 0.0 if enough else float(np.median([p.lost for p in pts]))
        trials = [p.trial_ratios() for p in pts]
        if sum(len(t) for t in trials) < MIN_REPLICATES:
            ratio = low = high = math.nan
            verdict = Verdict.DISTURBED
        else:
            change = paired_change([t for t in trials if len(t)], 1 - alpha)
            ratio, low, high = change.ratio, change.ci_low, change.ci_high
            verdict = band_verdict(ratio, low, high, threshold + margin)
            if margin and verdict not in MOVED:
                verdict = Verdict.DISTURBED
        verdicts.append(
            KernelVerdict(
                kernel=kernel,
                threads=int(threads),
                precision=precision,
                context=context,
                points=len(pts),
                pairs=sum(p.pairs for p in pts),
                ratio=ratio,
                ci_low=low,
                ci_high=high,
                verdict=verdict,
                disturbed_points=sum(p.disturbed for p in every),
            )
        )
    return verdicts


def judge_pair(
    db: Database, base_run: int, change_run: int, threshold: float = AB_THRESHOLD
) -> AbJudgement:
    """The stored pair of runs, judged."""
    require_samples(
        db,
        [base_run, change_run],
        "an A/B pair is judged from its paired samples: run `benchdb ab` again",
    )
    points, invalid = paired_points(db, base_run, change_run)
    return AbJudgement(
        base_run,
        change_run,
        threshold,
        1 - DEFAULT_ALPHA,
        tuple(judge(points, threshold)),
        invalid,
    )
