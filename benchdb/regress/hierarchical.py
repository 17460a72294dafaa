"""A kernel's change over its points: the median of the points' ratios and its interval.

What is an independent replicate when two runs are compared on a shared
machine?  Not a sample: a point's samples are taken back to back (within a
pass), so a burst of load from another tenant slows all of them together,
and a test that treats them as independent finds that burst "significant".
Points measured at different moments see different load, and a change of
the code (or compiler, or library) shows at all of a kernel's sizes.  So
the unit of evidence for a *kernel* is its point: the kernel's change is
estimated by the median over its points of their ratios of medians
(contender / baseline), and its uncertainty by a two-level (hierarchical)
bootstrap that resamples the points and, within each drawn point, both
runs' samples:

    for each of N_RESAMPLES replicates:
        draw P of the kernel's P points with replacement;
        for each drawn point, resample its baseline and contender samples
        with replacement and take log(median(b*) / median(a*));
        the replicate is the median of those P log ratios;
    the interval is the (alpha/2, 1 - alpha/2) percentiles, exponentiated.

Resampling the points carries the run-to-run scatter between sizes (a
point spoiled by a neighbour's burst is one draw among P, not a decisive
one); resampling within the points carries each point's own sampling
noise, so a noisy point widens the interval instead of being dropped.
Saravanan, Berman & Sober (2020, "Application of the hierarchical bootstrap
to multi-level data in neuroscience", Neuron Behav. Data Anal. Theory 3(5))
show that treating nested measurements as independent (a t-test over all
trials) gives false-positive rates above 45 % at a nominal 5 %, while the
bootstrap applied over the levels keeps the type-I error within its bound
-- the side to err on when a false alarm fails a project's CI.

The median rather than the mean over points: a kernel measured at 9 sizes
with one point 4x off (a burst during that point) keeps its estimate.  In
log space, so that 2x slower and 2x faster are symmetric; with an even
number of points the median is the geometric mean of the middle two.

Why both levels (measured in docs/findings/regression-detection.md): a
bootstrap over the points alone gives narrower intervals and catches more
injected slowdowns, but when a neighbour slows a whole run it moves every
point of a kernel alike and that design calls the machine's slowdown a
change.  A real collection's samples of a point span several passes
minutes apart; resampling them carries that drift into the interval.  The
price: where many of a point's samples are descheduled, a resample can put
its median in the slow mode, and a clear change at few points may come out
noisy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

N_RESAMPLES = 2000
"""Replicates of the two-level bootstrap: enough for stable 0.5 % / 99.5 % percentiles."""

SEED = 20140101
"""Fixed seed: the same samples always give the same interval."""


@dataclass(frozen=True)
class KernelChange:
    """``ratio`` (contender / baseline) and its interval at ``confidence``, over ``points``."""

    ratio: float
    ci_low: float
    ci_high: float
    points: int


def _resampled_log_medians(x: np.ndarray, rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` bootstrap replicates of ``log(median(x))``."""
    if x.size == 1:
        return np.full(n, np.log(x[0]))
    draws = x[rng.integers(0, x.size, size=(n, x.size))]
    return np.log(np.median(draws, axis=1))


def kernel_change(
    pairs: Sequence[tuple[Sequence[float], Sequence[float]]],
    confidence: float,
    *,
    n_resamples: int = N_RESAMPLES,
) -> KernelChange:
    """The median ratio over ``pairs`` (baseline, contender samples per point) and its interval."""
    if not pairs:
        raise ValueError("kernel_change() needs at least one point")
    rng = np.random.default_rng(SEED)
    logs = np.empty((len(pairs), n_resamples))
    observed = np.empty(len(pairs))
    for i, (a, b) in enumerate(pairs):
        x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        observed[i] = np.log(np.median(y) / np.median(x))
        logs[i] = _resampled_log_medians(y, rng, n_resamples) - _resampled_log_medians(
            x, rng, n_resamples
        )
    return _over_points(observed, logs, confidence, rng)


def paired_change(
    ratios: Sequence[Sequence[float]], confidence: float, *, n_resamples: int = N_RESAMPLES
) -> KernelChange:
    """The same estimate from *paired* ratios (``benchdb ab``): per point, the ratios
    change / base of its replicates (the trials of :mod:`benchdb.regress.paired`, each
    the median ratio of samples taken next to each other in time).

    A pair's two samples saw the same moment of the host, so drift that slows both
    cancels in its ratio instead of widening the interval; within a point the
    replicates' ratios, not each side's samples apart, are resampled.  The points are
    resampled as above, though drift cancels in a pair, because a point's trials run
    in a few pairs of processes at most: where a process put its code and data moves
    a point by several percent in all of that process's trials alike, and a busy
    host leaves a point one or two trials; with so few draws only the disagreement
    between the points shows that spread.  Keeping the points and resampling only
    the trials was tried twice and called unchanged kernels slower both times
    (docs/findings/ab-comparison.md).
    """
    if not ratios:
        raise ValueError("paired_change() needs at least one point")
    rng = np.random.default_rng(SEED)
    logs = np.empty((len(ratios), n_resamples))
    observed = np.empty(len(ratios))
    for i, r in enumerate(ratios):
        x = np.asarray(r, dtype=float)
        observed[i] = np.log(np.median(x))
        logs[i] = _resampled_log_medians(x, rng, n_resamples)
    return _over_points(observed, logs, confidence, rng)


def _over_points(
    observed: np.ndarray, logs: np.ndarray, confidence: float, rng: np.random.Generator
) -> KernelChange:
    """The median of the points' ``observed`` log ratios and the percentile interval of the
    median over points drawn with replacement, each drawn point's replicate from ``logs``."""
    points, n_resamples = logs.shape
    drawn = rng.integers(0, points, size=(n_resamples, points))
    replicates = np.median(logs[drawn, np.arange(n_resamples)[:, None]], axis=1)
    tail = 50 * (1 - confidence)
    low, high = np.percentile(replicates, [tail, 100 - tail])
    return KernelChange(
        ratio=float(np.exp(np.median(observed))),
        ci_low=float(np.exp(low)),
        ci_high=float(np.exp(high)),
        points=points,
    )
