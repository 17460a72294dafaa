"""What the report shows, gathered through the Python API before anything is drawn.

Per kernel of the picked collection (:func:`benchdb.regress.pick.pick_runs`):
its measured points and the baseline's, as rates in the predictor's unit
(:func:`benchdb.predict.basis.rate_basis`: flop/s, else B/s, else point/s);
the lookup curve ``benchdb predict`` answers from for the collection's
environment, threads, precision and context (paper 003 eq. 8-9, the default
method), with its leave-one-out error; the comparison's rows for the kernel;
and the history of each of its points (:func:`benchdb.regress.kernel_history`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from ..db.engine import Database
from ..db.measurements import measurements_frame
from ..errors import UserError
from ..predict.basis import rate_basis
from ..predict.lookup import prepare_lookup
from ..predict.methods import DEFAULT_METHOD
from ..regress import RunComparison, Series, kernel_history
from ..regress.pick import RunPick

CONFIG = ["threads", "precision", "context"]
CURVE_SAMPLES = 200
"""Footprints the prediction is drawn at, log-spaced across the measured range."""
HISTORY_RUNS = 200
"""Newest runs of a kernel whose history the page draws and searches for steps: a year
of CI history would otherwise put every run on the page (``benchdb history`` has all)."""

T = TypeVar("T")


def config_label(threads: int, precision: str, context: str) -> str:
    return f"{threads} thr, {precision}, {context}"


@dataclass(frozen=True)
class Prediction:
    """The lookup curve for one configuration of a kernel, over its measured range."""

    config: str
    method: str
    footprint: np.ndarray
    rate: np.ndarray
    run_ids: tuple[int, ...]
    environment_id: int
    loo_median: float | None  # median |leave-one-out error| of the curve's points
    at_points: pd.Series  # the curve's rate at each of the collection's points (by index)


@dataclass
class KernelContent:
    """Everything one kernel's part of the page shows."""

    kernel: str
    unit: str
    measured: pd.DataFrame  # the collection's and the baseline's points (``role``)
    predictions: list[Prediction] = field(default_factory=list)
    comparison: pd.DataFrame | None = None  # RunComparison.results rows of the kernel
    verdicts: pd.DataFrame | None = None  # RunComparison.kernels rows of the kernel
    history: list[Series] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _identity(items: Iterable[T], **_: Any) -> Iterable[T]:
    return items


def measured_points(db: Database, pick: RunPick) -> pd.DataFrame:
    """Valid points of the collection (``role`` "collection") and the baseline, with rates."""
    runs = {pick.collection.run_id: "collection"}
    if pick.baseline is not None:
        runs[pick.baseline.run_id] = "baseline"
    frame = measurements_frame(db, run_ids=list(runs), valid_only=True)
    work = {
        key: rate_basis(key[0], key[1], db).work_per_point
        for key in set(zip(frame["kernel"], frame["precision"], strict=True))
    }
    per_point = np.array(
        [work[(k, p)] for k, p in zip(frame["kernel"], frame["precision"], strict=True)]
    )
    return frame.assign(
        role=frame["run_id"].map(runs),
        rate=per_point * frame["points"].to_numpy(dtype=float) / frame["t_median"],
        config=[config_label(*c) for c in frame[CONFIG].itertuples(index=False)],
    )


def prediction(db: Database, pick: RunPick, points: pd.DataFrame) -> Prediction:
    """The default method's lookup curve for the configuration of the collection's
    ``points`` (one kernel, one configuration); ``UserError`` when there is none."""
    kernel, threads, precision, context = points[["kernel", *CONFIG]].iloc[0]
    lookup = prepare_lookup(
        db,
        kernel,
        method=DEFAULT_METHOD,
        threads=int(threads),
        precision=precision,
        machine=str(pick.scope.node_class_id),
        host=pick.scope.host,
        environment_id=pick.collection.record.environment_id,
        context=context,
        store=False,  # a report reads: it never waits for, or adds to, the database
    )
    fp = lookup.curve.footprint
    x = np.geomspace(fp[0], fp[-1], CURVE_SAMPLES)
    loo = [abs(e) for e in lookup.params.get("loo_rel", []) if e is not None]
    return Prediction(
        config=str(points["config"].iloc[0]),
        method=lookup.method.name,
        footprint=x,
        rate=lookup.rates(x),
        run_ids=lookup.curve.run_ids,
        environment_id=lookup.selection.environment_id,
        loo_median=float(np.median(loo)) if loo else None,
        at_points=pd.Series(lookup.rates(points["footprint_bytes"].to_numpy(float)), points.index),
    )


def _history(db: Database, kernel: str, pick: RunPick, own: pd.DataFrame, detector: str):
    keys = set(own[["shape_key", *CONFIG]].itertuples(index=False, name=None))
    _, series = kernel_history(
        db,
        kernel,
        machine=str(pick.scope.node_class_id),
        host=pick.scope.host,
        detector=detector,
        last=HISTORY_RUNS,
    )
    return [
        s
        for s in series
        if (s.shape_key, s.threads, s.precision, s.context) in keys and len(s.values) > 1
    ]


def kernel_contents(
    db: Database,
    pick: RunPick,
    comparison: RunComparison | None,
    *,
    detector: str,
    track: Callable[..., Iterable[Any]] = _identity,
) -> list[KernelContent]:
    """One :class:`KernelContent` per kernel of the collection, by name."""
    points = measured_points(db, pick)
    own = points[points["role"] == "collection"]
    out = []
    for kernel in track(sorted(set(own["kernel"])), description="kernels"):
        mine = own[own["kernel"] == kernel]
        content = KernelContent(
            kernel=kernel,
            unit=rate_basis(kernel, str(mine["precision"].iloc[0]), db).unit,
            measured=points[points["kernel"] == kernel],
        )
        for label, group in mine.groupby("config", sort=True):
            try:
                content.predictions.append(prediction(db, pick, group))
            except UserError as exc:
                content.notes.append(f"No prediction for {label}: {exc}")
        if comparison is not None:
            content.comparison = comparison.results[comparison.results["kernel"] == kernel]
            content.verdicts = comparison.kernels[comparison.kernels["kernel"] == kernel]
        content.history = _history(db, kernel, pick, mine, detector)
        if any(len(s.values) >= HISTORY_RUNS for s in content.history):
            content.notes.append(
                f"History: the newest {HISTORY_RUNS} runs of {kernel}; "
                f"`benchdb history --kernel {kernel}` searches them all."
            )
        out.append(content)
    return out
