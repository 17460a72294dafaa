"""Which two runs a report compares: the newest kernel collection and a comparable baseline.

A node class's runs are of several kinds (``run.kind``): ``kernels``
(``benchdb collect``), ``app-calibrate`` (``benchdb app calibrate``: shallow
timed with busy neighbours), ``app``, ``comm``.  Only a comparison of two
runs of the same kind and the same settings says something about the code:
two sweeps of other sizes share no point, and a populated-node calibration
times the loops in another context.

*Settings* are the run's stored ``config`` without what identifies one run
rather than what it measures: its ``uuid``, the ``sweep_hash`` (it covers the
user code's hash, and changed code is exactly what a comparison is for) and
each user source's ``version``.  What remains for a collection is its plan:
the points (benchmark, shape, precision, threads), the sample time, the
number of samples and passes, the mode and the sources it loaded.

:func:`pick_runs` takes the newest complete kernel collection, then as its
baseline the pinned baseline (``benchdb baseline set``) when that has the same
settings, else the newest earlier complete collection with the same settings,
and says why, naming each newer or skipped run it left out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..db.engine import Database
from ..db.run_records import RunRecord, measured_run_records, pinned_baseline, point_counts
from ..db.runs import SUPPLEMENTS
from ..db.runstate import RunKind, RunStatus
from ..db.scope import LISTED, Scope, resolve_scope
from ..errors import UserError

COLLECTION = RunKind.KERNELS
"""The run kind of ``benchdb collect``."""

RUN_IDENTITY = ("uuid", "sweep_hash")
"""Config keys that identify one run, not what it measured."""

KIND_NAMES = {
    RunKind.KERNELS: "kernel collection (benchdb collect)",
    RunKind.APP_CALIBRATE: "populated-node calibration (benchdb app calibrate)",
    RunKind.APP: "application run (benchdb app run)",
}


@dataclass(frozen=True)
class RunInfo:
    """One run as a report names it: its record, how many points it holds, and its
    settings in words."""

    record: RunRecord
    measurements: int
    settings: str

    @property
    def run_id(self) -> int:
        return self.record.id

    @property
    def label(self) -> str:
        run = self.record
        tags = f" [{', '.join(run.tags)}]" if run.tags else ""
        return f"run {run.id}{tags} of {run.started_at:%Y-%m-%d %H:%M}"


@dataclass(frozen=True)
class LeftOut:
    """A run the pick passed over, and why."""

    run: RunInfo
    why: str


@dataclass(frozen=True)
class RunPick:
    """The collection a report shows, the baseline it is compared with (or none), and why."""

    scope: Scope
    collection: RunInfo
    baseline: RunInfo | None
    reason: str
    left_out: tuple[LeftOut, ...]


def settings(run: RunRecord) -> dict[str, Any]:
    """What the run measured and how: kind and config without its identity (module docstring)."""
    config = {k: v for k, v in (run.config or {}).items() if k not in RUN_IDENTITY}
    if "sources" in config:
        config["sources"] = [
            {k: v for k, v in s.items() if k != "version"} for s in config["sources"]
        ]
    return {"kind": run.kind, **config}


def settings_difference(a: Mapping[str, Any], b: Mapping[str, Any]) -> str:
    """In words, how settings ``b`` differ from ``a`` ("" when the same)."""
    words = []
    for key in sorted(a.keys() | b.keys()):
        x, y = a.get(key), b.get(key)
        if x == y:
            continue
        if key == "points" and isinstance(x, list) and isinstance(y, list):
            words.append(f"other points ({len(y)} instead of {len(x)})")
        elif key == "kind":
            words.append(f"a {KIND_NAMES.get(str(y), str(y))}")
        else:
            words.append(f"{key} {y} instead of {x}")
    return ", ".join(words)


def describe_settings(run: RunRecord) -> str:
    """A short account of a run's settings for a page: kind, mode, points, sampling."""
    config = run.config or {}
    parts = [KIND_NAMES.get(run.kind, run.kind)]
    if "mode" in config:
        parts.append(f"{config['mode']} sweep")
    if isinstance(config.get("points"), list):
        names = sorted({str(p[0]) for p in config["points"]})
        parts.append(f"{len(config['points'])} points of {', '.join(names)}")
    if "sample_time" in config and "samples" in config:
        parts.append(
            f"{config['samples']} samples of {float(config['sample_time']) * 1e3:g} ms "
            f"x {config.get('passes', 1)} pass(es)"
        )
    if "ranks" in config:
        parts.append(f"{config['ranks']} ranks")
    return "; ".join(parts)


def _info(run: RunRecord, measurements: int) -> RunInfo:
    return RunInfo(run, measurements, describe_settings(run))


def _not_taken(run: RunRecord, wanted: Mapping[str, Any]) -> str:
    """Why ``run`` cannot be compared with a collection of settings ``wanted`` ("" if it can)."""
    if run.kind != COLLECTION:
        return f"a {KIND_NAMES.get(run.kind, run.kind)}, not a kernel collection"
    supplement = SUPPLEMENTS.get((run.config or {}).get("mode", ""))
    if supplement:
        return f"{supplement}, not a collection"
    if run.status != RunStatus.COMPLETE:
        return f"{run.status}, not complete"
    differ = settings_difference(wanted, settings(run))
    return f"collected with other settings: {differ}" if differ else ""


def _baseline(
    newest: RunRecord, older: list[RunRecord], pinned: RunRecord | None, wanted: Mapping[str, Any]
) -> tuple[RunRecord | None, str]:
    """The baseline among ``older`` runs (newest first) and why (module docstring)."""
    if pinned is not None and pinned.id != newest.id and not _not_taken(pinned, wanted):
        return pinned, "the node class's pinned baseline (benchdb baseline set), same settings"
    earlier = next((r for r in older if not _not_taken(r, wanted)), None)
    if earlier is not None:
        reason = "the newest earlier complete collection with the same settings"
    else:
        reason = "no earlier complete kernel collection has the same settings: nothing to compare"
    if pinned is not None:
        why = "this collection itself" if pinned.id == newest.id else _not_taken(pinned, wanted)
        reason += f"; the pinned baseline, run {pinned.id}, is {why}"
    return earlier, reason


def pick_runs(db: Database, machine: str | None = None, host: str | None = None) -> RunPick:
    """The newest complete kernel collection of a node class (or of ``host``) and its
    comparable baseline.

    ``left_out`` names the runs newer than the collection and, when the
    baseline is the newest earlier collection, the runs between the two.
    ``UserError`` naming the fix when it has no complete kernel collection.
    """
    with db.reading() as s:
        scope = resolve_scope(s, machine, host)
        runs = measured_run_records(s, scope)
        seen = _through(runs, lambda r: not _not_taken(r, settings(r)))
        if not seen or _not_taken(seen[-1], settings(seen[-1])):
            counts = point_counts(s, [r.id for r in seen[:LISTED]])
            found = "; ".join(
                f"{i.label}: {i.settings}, {i.record.status}"
                for i in (_info(r, counts.get(r.id, 0)) for r in seen[:LISTED])
            )
            more = f" and {len(seen) - LISTED} more" if len(seen) > LISTED else ""
            raise UserError(
                f"{scope.label} has no complete kernel collection "
                f"({found or 'no measured run'}{more}); run `benchdb collect` first"
            )
        newest, skipped = seen[-1], seen[:-1]
        wanted = settings(newest)
        pinned = pinned_baseline(s, scope.node_class_id)
        older: list[RunRecord] = []
        if pinned is None or pinned.id == newest.id or _not_taken(pinned, wanted):
            older = _through(runs, lambda r: not _not_taken(r, wanted))
        baseline, reason = _baseline(newest, older, pinned, wanted)
        if baseline is not None and (pinned is None or baseline.id != pinned.id):
            skipped += older[: older.index(baseline)]
        picked = [newest, *skipped, *([baseline] if baseline is not None else [])]
        counts = point_counts(s, [r.id for r in picked])
        info = {r.id: _info(r, counts.get(r.id, 0)) for r in picked}
        return RunPick(
            scope=scope,
            collection=info[newest.id],
            baseline=info[baseline.id] if baseline is not None else None,
            reason=reason,
            left_out=tuple(LeftOut(info[r.id], _not_taken(r, wanted)) for r in skipped),
        )


def _through(runs: Iterator[RunRecord], found: Callable[[RunRecord], bool]) -> list[RunRecord]:
    """The runs read from ``runs`` up to and including the first that is ``found`` (all of
    them if none is): a year of history is read only as far back as the answer lies."""
    out = []
    for run in runs:
        out.append(run)
        if found(run):
            break
    return out
