"""One point measured on both sides, as sample pairs in several trials.

The two sides prepare the same point (each in its own worker), the base side
calibrates the repetitions and both use that count, so a pair's two samples do the
same number of repetitions.  Then pairs are taken until ``pairs`` of them ran
undisturbed on both sides, in each of ``trials`` trials; each trial prepares the
point afresh on both sides, its arrays at virtual addresses drawn for the trial
and alike on both sides (:mod:`.array_layout`), in the next pair of worker processes
(each pair placed in memory its own way, :func:`.process.layout_environment`).
Where the arrays and the code land in memory changes the time of the same code
by several percent, and by 2x at an L1-sized point whose arrays land on unlucky
pages or alias within one (docs/findings/ab-comparison.md): within one preparation
every pair shares that draw, so the trials, not the pairs, are a point's replicates
(:mod:`benchdb.regress.paired`).  The order of the pairs:

* ``interleaved``: in each round the two sides take one sample each, one after the
  other, in an order drawn at random per round -- randomized multiple interleaved
  trials (RMIT; Abedi & Brecht, "Conducting Repeatable Experiments in Highly
  Variable Cloud Computing Environments", ICPE 2017).  A fixed order (base, then
  change) would alias with periodic load and with whatever the first sample of a
  round leaves in the caches; both processes are pinned to the same CPUs, and only
  one measures at a time.
* ``duet``: both sides are told to start at once, each pinned to CPUs of its own
  (swapped between trials), and their samples run side by side -- duet
  benchmarking (Bulej et al., "Duet Benchmarking: Improving Measurement Accuracy
  in the Cloud", ICPE 2020): a neighbour that slows the machine slows both halves
  of the pair.

A pair in which the evidence (:mod:`benchdb.evidence`) marks either sample disturbed
is retaken on both sides, at most :data:`~benchdb.collectors.timing.RETAKES_PER_SAMPLE`
more times per pair (as ``collect`` retakes); the clean half of such a pair is kept
as ``unpaired``, so the kept samples of the two sides pair by index.  A point left
short of clean pairs is flagged ``disturbed`` on both sides.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from benchdb.errors import UserError
from benchdb.evidence import Evidence

from ..pinning import usable_cpus
from ..timing import RETAKES_PER_SAMPLE, PointTiming
from .process import WorkerProcess
from .protocol import SIDES, evidence_from_json

ORDERS = ("duet", "interleaved")


DEFAULT_TRIALS = 6
"""Trials per point: each side prepares the point afresh (new arrays) for each.  The
trials, not the pairs, are a point's replicates (:mod:`benchdb.regress.paired`), and
their spread rather than the points' is what widens a kernel's interval, so their
number sets how small a change can be told; six fall two on each default pair of
workers (docs/findings/ab-comparison.md)."""


@dataclass(frozen=True)
class PairedTiming:
    """A point's samples on both sides, one ``{side: PointTiming}`` per trial, or why it
    failed."""

    trials: Sequence[Mapping[str, PointTiming]]
    placements: Mapping[str, str]
    failure: str | None = None


def _both(workers: Mapping[str, WorkerProcess], op: str, **fields: Any) -> dict[str, dict]:
    """Send ``op`` to both sides, then read both replies: they work at the same time."""
    for w in workers.values():
        w.send(op, **fields)
    return {side: w.receive() for side, w in workers.items()}


def _failure(replies: Mapping[str, dict]) -> str | None:
    failed = [f"{side} side: {r['failure']}" for side, r in replies.items() if "failure" in r]
    return "; ".join(failed) or None


class _PointFailed(Exception):
    def __init__(self, reason: str) -> None:
        self.reason = reason


def _ask_both(workers: Mapping[str, WorkerProcess], op: str, **fields: Any) -> dict[str, dict]:
    """Both sides' replies to ``op``; :class:`_PointFailed` if either could not measure."""
    replies = _both(workers, op, **fields)
    failure = _failure(replies)
    if failure is not None:
        raise _PointFailed(failure)
    return replies


def _pair(
    workers: Mapping[str, WorkerProcess], repetitions: int, order: str, rng: np.random.Generator
) -> dict[str, dict]:
    """One sample on each side: at once (duet), or one after the other in a random order."""
    if order == "duet":
        return _ask_both(workers, "sample", repetitions=repetitions)
    replies = {}
    for i in rng.permutation(len(SIDES)):
        replies[SIDES[i]] = workers[SIDES[i]].ask("sample", repetitions=repetitions)
        if "failure" in replies[SIDES[i]]:
            raise _PointFailed(f"{SIDES[i]} side: {replies[SIDES[i]]['failure']}")
    return replies


def _trial(
    workers: Mapping[str, WorkerProcess],
    repetitions: int,
    pairs: int,
    order: str,
    rng: np.random.Generator,
    checksums: Mapping[str, float | None],
) -> dict[str, PointTiming]:
    """Pairs until ``pairs`` ran clean on both sides, or the retakes are spent."""
    times: dict[str, list[dict[str, float]]] = {s: [] for s in SIDES}
    evidence: dict[str, list[Evidence]] = {s: [] for s in SIDES}
    clean = 0
    while clean < pairs and len(evidence["base"]) < pairs * (1 + RETAKES_PER_SAMPLE):
        replies = _pair(workers, repetitions, order, rng)
        for side in SIDES:
            times[side].append(replies[side]["times"])
            evidence[side].append(evidence_from_json(replies[side]["evidence"]))
        clean += not any(evidence[s][-1].disturbed for s in SIDES)
    timings = {}
    for side, other in zip(SIDES, SIDES[::-1], strict=True):
        per_kernel: dict[str, list[float]] = {}
        for sample in times[side]:
            for kernel, seconds in sample.items():
                per_kernel.setdefault(kernel, []).append(seconds)
        timings[side] = PointTiming(
            repetitions,
            per_kernel,
            checksums[side],
            tuple(evidence[side]),
            pairs,
            tuple(
                not mine.disturbed and theirs.disturbed
                for mine, theirs in zip(evidence[side], evidence[other], strict=True)
            ),
        )
    return timings


def measure_pair(
    worker_pairs: Sequence[Mapping[str, WorkerProcess]],
    point: Sequence[Any],
    pairs: int,
    order: str,
    rng: np.random.Generator,
    trials: int = DEFAULT_TRIALS,
) -> PairedTiming:
    """``trials`` times: prepare ``point`` (``[benchmark, shape, precision, threads]``) on
    both sides afresh and take ``pairs`` clean sample pairs in ``order`` (module
    docstring); trial ``t`` runs on ``worker_pairs[t % len(worker_pairs)]``, and the
    base calibrates the repetitions in the first trial."""
    threads = int(point[3])
    measured: list[dict[str, PointTiming]] = []
    placements: dict[str, str] = {}
    repetitions = 0
    workers = worker_pairs[0]
    try:
        for trial in range(trials):
            workers = worker_pairs[trial % len(worker_pairs)]
            layout = int(rng.integers(0, 2**31))  # the arrays' addresses: alike on both sides
            for i, w in enumerate(workers.values()):
                # duet: the sides swap CPUs from trial to trial, so that a CPU busier
                # than the other (a neighbour, an interrupt) weighs on both sides alike
                first = (i + trial) % 2 * threads if order == "duet" else 0
                w.send("prepare", point=list(point), first_cpu=first, layout=layout)
            prepared = {side: w.receive() for side, w in workers.items()}
            failure = _failure(prepared)
            if failure is not None:
                raise _PointFailed(failure)
            placements = {side: r["placement"] for side, r in prepared.items()}
            if not repetitions:
                repetitions = int(workers["base"].ask("calibrate")["repetitions"])
            checksums = {side: r["checksum"] for side, r in prepared.items()}
            measured.append(_trial(workers, repetitions, pairs, order, rng, checksums))
            _both(workers, "release")
    except _PointFailed as exc:
        _both(workers, "release")
        return PairedTiming([], {}, exc.reason)
    return PairedTiming(measured, placements)


MAX_DEFAULT_PROCESSES = 3
"""Pairs of workers ``benchdb ab`` starts without ``--processes``: one per trial, at most
this many (each pair compiles every kernel once)."""


def choose_processes(requested: int | None, trials: int) -> int:
    """Pairs of workers for ``trials`` trials a point; UserError for more pairs than trials
    (a pair no trial runs on would only compile)."""
    if requested is None:
        return min(trials, MAX_DEFAULT_PROCESSES)
    if requested > trials:
        raise UserError(
            f"--processes {requested} is more than --trials {trials}: each trial runs on one "
            f"pair of processes; give --processes {trials} or more trials"
        )
    return requested


DEFAULT_ORDER = "interleaved"
"""The order ``benchdb ab`` takes without ``--order`` (docs/findings/ab-comparison.md)."""


def choose_order(requested: str | None, threads: int) -> tuple[str, str | None]:
    """(order, a line to tell the user or None); UserError for an order that cannot run.

    Duet needs ``2 * threads`` usable CPUs; without them the default falls back to
    interleaved (saying so), and an explicit ``--order duet`` is refused.
    """
    if requested is not None and requested not in ORDERS:
        raise UserError(f"--order {requested!r}: use {' or '.join(ORDERS)}")
    usable = len(usable_cpus())
    fits = usable >= 2 * threads
    if requested == "duet" and not fits:
        raise UserError(
            f"--order duet needs {2 * threads} CPUs ({threads} per side), this process may use "
            f"{usable}; use --order interleaved"
        )
    order = requested or DEFAULT_ORDER
    if order == "duet" and not fits:
        return "interleaved", (
            f"duet order needs {2 * threads} CPUs, {usable} usable here: measuring interleaved"
        )
    return order, None
