"""``history``: a kernel's median time over runs, its steps, and what changed at each.

A series is one point (kernel, shape, threads, precision, context) on one
node class -- every host of it, or the one of ``--host`` -- one value per run
(the run's median seconds per repetition, with the host that ran it), oldest
run first, across the kernel's versions.  Pooling the class keeps one history
across an OS update and across the nodes a batch system placed the runs on.
A detector from :mod:`.detectors` finds the steps; for each step the runs on
either side, the difference of their environments and any change of the
kernel's version are given, since changed code, a changed compiler, library
or setting is the usual cause.  A step where the class's baseline was reset
(``benchdb baseline set RUN --reason``, to a run after the step's previous
run and up to its run) carries that reset and its reason: a change someone
looked at and accepted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..db.baseline import baseline_changes
from ..db.engine import Database
from ..db.envdiff import environments_diff
from ..db.measurements import measured_kernels, measurements_frame, newest_runs
from ..db.scope import resolve_scope
from ..errors import UserError
from ..shapes import parse_shape, shape_key
from .detectors import Detector, get_detector
from .points import POINT_KEY, version_change

SERIES_COLUMNS = [
    "run_id",
    "run_started_at",
    "run_tags",
    "host",
    "environment_id",
    "kernel_version",
    "t_median",
    "t_min",
    "t_cv",
]


@dataclass
class Series:
    """One point's values over runs and the steps found in them."""

    kernel: str
    shape_key: str
    threads: int
    precision: str
    context: str
    footprint_bytes: int
    values: pd.DataFrame
    steps: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel,
            "shape": self.shape_key,
            "threads": self.threads,
            "precision": self.precision,
            "context": self.context,
            "footprint_bytes": self.footprint_bytes,
            "values": self.values.to_dict(orient="records"),
            "steps": self.steps,
        }


def _reset_at(
    changes: list[dict[str, Any]], before: pd.Series, after: pd.Series
) -> dict[str, Any] | None:
    """The newest baseline reset to a run started after ``before`` and up to ``after``."""
    for change in reversed(changes):
        if before["run_started_at"] < change["run_started_at"] <= after["run_started_at"]:
            return {k: change[k] for k in ("run_id", "reason", "set_at")}
    return None


def _step_details(
    db: Database, values: pd.DataFrame, steps: list[Any], changes: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    details = []
    for step in steps:
        before, after = values.iloc[step.index - 1], values.iloc[step.index]
        env = environments_diff(db, int(before["environment_id"]), int(after["environment_id"]))
        details.append(
            {
                **step.to_dict(),
                "run_id": int(after["run_id"]),
                "run_tags": list(after["run_tags"]),
                "previous_run_id": int(before["run_id"]),
                "environment_diff": env,
                "version_change": version_change(before["kernel_version"], after["kernel_version"]),
                "baseline_reset": _reset_at(changes, before, after),
            }
        )
    return details


def kernel_history(
    db: Database,
    kernel: str,
    *,
    shape: str | None = None,
    threads: int | None = None,
    precision: str | None = None,
    context: str | None = None,
    machine: str | None = None,
    host: str | None = None,
    detector: Detector | str = "potts",
    last: int | None = None,
) -> tuple[dict[str, Any], list[Series]]:
    """The scope (:meth:`~benchdb.db.scope.Scope.to_dict`) and the series of ``kernel``
    matching the filters, steps detected; ``last``: over the newest ``last`` runs that
    measured the kernel only (a page of a year of CI history shows its recent months).

    ``UserError`` (naming what exists) for an unknown kernel or shape, or
    when nothing matches the filters.
    """
    found = get_detector(detector) if isinstance(detector, str) else detector
    with db.reading() as s:
        scope = resolve_scope(s, machine, host)
    known = measured_kernels(db, scope)
    if kernel not in known:
        raise UserError(
            f"no measurements of kernel {kernel!r} on {scope.label}; "
            f"measured kernels: {', '.join(known) or 'none (run `benchdb collect`)'}"
        )
    frame = measurements_frame(
        db,
        kernels=[kernel],
        run_ids=None if last is None else newest_runs(db, scope, kernel, last),
        scope=scope,
        threads=[threads] if threads is not None else None,
        precision=precision,
        context=context,
        valid_only=True,
        with_evidence=False,
    )
    if shape is not None:
        key = shape_key(parse_shape(shape))
        shapes = sorted(set(frame["shape_key"]), key=lambda k: [int(d) for d in k.split("x")])
        if key not in shapes:
            raise UserError(
                f"kernel {kernel!r} has no measurement at shape {key} with these filters; "
                f"measured shapes: {', '.join(shapes) or 'none'}"
            )
        frame = frame[frame["shape_key"] == key]
    if frame.empty:
        raise UserError(
            f"kernel {kernel!r} has no valid measurement with --threads/--precision/--context "
            "as given; drop a filter to see what exists"
        )
    series = []
    changes = baseline_changes(db, scope.node_class_id)
    frame = frame.sort_values(["run_started_at", "run_id"])
    for key, group in frame.groupby(POINT_KEY[1:], sort=True):
        values = group[SERIES_COLUMNS].reset_index(drop=True)
        steps = found.detect(values["t_median"].to_list())
        series.append(
            Series(
                kernel=kernel,
                shape_key=key[0],
                threads=int(key[1]),
                precision=key[2],
                context=key[3],
                footprint_bytes=int(group["footprint_bytes"].iloc[0]),
                values=values,
                steps=_step_details(db, values, steps, changes),
            )
        )
    series.sort(key=lambda x: (x.threads, x.precision, x.context, x.footprint_bytes))
    return {**scope.to_dict(), "label": scope.label}, series
