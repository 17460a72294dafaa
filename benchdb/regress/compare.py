"""``compare``: every point two runs have in common, judged by :mod:`.ab`, then per kernel.

A point is a (kernel, shape, threads, precision, context); only valid
measurements count.  Each point gets a verdict from :func:`.ab.compare_samples`.

The *kernel* verdict (per kernel, threads, precision and context, over its
shapes) is what fails CI.  It follows the combined evidence of the kernel's
points (:mod:`.hierarchical`): the median over the points of their ratios,
with a two-level bootstrap interval at ``1 - alpha`` that resamples the
points and the samples within them.  With the kernel's threshold ``t`` and
the band ``[1/(1+t), 1+t]``:

* ``slower``: the interval lies wholly above 1 (the change is significant)
  *and* the median ratio exceeds ``1+t`` (it is larger than the threshold);
  ``faster`` alike below -- the rule of asv's ``compare`` (significance from
  the data, a minimum effect from the user), at the level of the kernel;
* ``unchanged``: the whole interval lies inside the band;
* ``noisy``: otherwise -- the data can neither confirm nor rule out a
  change larger than the threshold.

Why the points and not the samples are the replicates: a point's samples are
taken back to back, so one burst of another process's load slows them all
and the point alone can look "significantly" slower; a change of the code,
compiler or library shows across a kernel's sizes.  Why the samples are
resampled too: a real collection's samples of a point come from several
passes minutes apart, and how much they differ is how much the machine's
speed drifted; a whole run slowed by the machine moves every point of a
kernel alike, which a bootstrap over the points alone would call a change
(docs/findings/regression-detection.md has the measurements of both
designs; benchmarks/regression_detection.py and false_positive_rate.py
measure both directions).  A slowdown far beyond the noise (``NUMBA_OPT=0``,
20-80x) lies outside any interval the noise gives.

Thresholds may differ per kernel (``kernel_thresholds``: exact names or
:mod:`fnmatch` patterns, the exact name first, then the longest matching
pattern; from the project's config file, :mod:`benchdb.config`).
``per_point=True`` (``--per-point``) fails on any slower point instead, for
quiet dedicated machines.

Only runs of the same node class are comparable (:mod:`benchdb.node_class`:
the same hardware, on any of its hosts, before or after an OS update): across
classes a difference says nothing about the code.  The environment difference
between the two runs is part of the answer, since it is usually the cause of
a change; so is a kernel whose version changed between them (a user's program
or plugin rebuilt with other code): ``version_change`` names both versions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from ..db.describe import machine_summary, run_summary
from ..db.engine import Database
from ..db.envdiff import environment_diff
from ..db.measurements import measurements_frame
from ..db.prune import require_samples
from ..db.run_records import run_record
from ..db.runref import resolve_runs
from ..errors import UserError
from ..stats import UNSTEADY_FLAGS
from ..verdicts import Verdict
from .ab import DEFAULT_ALPHA, DEFAULT_THRESHOLD, VERDICTS, PointComparison, compare_batch
from .hierarchical import kernel_change
from .points import POINT_KEY, version_change
from .replicates import MIN_PAIRS, RunScatter, charge, replicate_runs, run_scatter

RESULT_COLUMNS = [
    *POINT_KEY,
    "footprint_bytes",
    "baseline_median",
    "contender_median",
    "ratio",
    "ci_low",
    "ci_high",
    "p_value",
    "threshold",
    "verdict",
    "version_change",
]

KERNEL_KEY = ["kernel", "threads", "precision", "context"]
KERNEL_COLUMNS = [
    *KERNEL_KEY,
    "points",
    "slower",
    "faster",
    "noisy",
    "median_ratio",
    "ci_low",
    "ci_high",
    "threshold",
    "run_scatter",
    "scatter_pairs",
    "verdict",
    "version_change",
]

T = TypeVar("T")


def check_threshold(value: float, where: str) -> None:
    """``UserError`` unless ``value`` is a usable relative threshold (a fraction)."""
    if not 0 < value < 10:
        raise UserError(
            f"{where} {value * 100:g}% is out of range; give a percentage above 0 and below 1000"
        )


def threshold_for(kernel: str, default: float, kernel_thresholds: Mapping[str, float]) -> float:
    """The threshold of ``kernel``: its exact entry, else the longest matching pattern, else
    ``default``."""
    if kernel in kernel_thresholds:
        return kernel_thresholds[kernel]
    matching = [p for p in kernel_thresholds if fnmatchcase(kernel, p)]
    return kernel_thresholds[max(matching, key=len)] if matching else default


def band_verdict(ratio: float, low: float, high: float, threshold: float) -> Verdict:
    """A kernel's verdict from its median ``ratio`` and interval (module docstring rules)."""
    upper, lower = 1 + threshold, 1 / (1 + threshold)
    if low > 1 and ratio > upper:
        return Verdict.SLOWER
    if high < 1 and ratio < lower:
        return Verdict.FASTER
    if low >= lower and high <= upper:
        return Verdict.UNCHANGED
    return Verdict.NOISY


def kernel_verdicts(
    results: pd.DataFrame,
    samples: Mapping[tuple, tuple[Any, Any]],
    alpha: float,
    scatter: Mapping[tuple, RunScatter] | None = None,
) -> pd.DataFrame:
    """One row per kernel configuration: point counts, median ratio, interval and verdict.

    ``samples`` maps each point key (:data:`POINT_KEY`) to its (baseline, contender) samples;
    ``scatter`` a kernel key to its run-to-run scatter (:mod:`.replicates`), which widens the
    kernel's interval (:func:`.replicates.charge`).
    """
    rows = []
    for key, group in results.groupby(KERNEL_KEY, sort=True):
        counts = group["verdict"].value_counts()
        pairs = [samples[k] for k in group[POINT_KEY].itertuples(index=False, name=None)]
        drift = (scatter or {}).get(key)
        change = kernel_change(pairs, 1 - alpha)
        if drift is not None:
            change = charge(change, drift, alpha)
        threshold = float(group["threshold"].iloc[0])
        rows.append(
            {
                **dict(zip(KERNEL_KEY, key, strict=True)),
                "points": len(group),
                "slower": int(counts.get("slower", 0)),
                "faster": int(counts.get("faster", 0)),
                "noisy": int(counts.get("noisy", 0)),
                "median_ratio": change.ratio,
                "ci_low": change.ci_low,
                "ci_high": change.ci_high,
                "threshold": threshold,
                "run_scatter": float(np.expm1(drift.log_rms)) if drift else float("nan"),
                "scatter_pairs": drift.pairs if drift else 0,
                "verdict": band_verdict(change.ratio, change.ci_low, change.ci_high, threshold),
                "version_change": ", ".join(sorted(set(group["version_change"]) - {""})),
            }
        )
    return pd.DataFrame(rows, columns=KERNEL_COLUMNS)


@dataclass
class RunComparison:
    """Baseline vs contender: one row per common point in ``results``, per kernel in ``kernels``.

    ``threshold`` is the default; ``kernel_thresholds`` the per-kernel ones in force
    (the ``threshold`` column of both tables holds the one each row was judged by).
    """

    baseline: dict[str, Any]
    contender: dict[str, Any]
    machine: dict[str, Any]
    threshold: float
    alpha: float
    results: pd.DataFrame
    kernels: pd.DataFrame
    per_point: bool = False
    kernel_thresholds: dict[str, float] = field(default_factory=dict)
    environment_diff: list[dict[str, Any]] = field(default_factory=list)
    only_baseline: int = 0
    only_contender: int = 0
    replicates: tuple[int, ...] = ()
    """The baseline's replicate runs whose scatter was charged (:mod:`.replicates`)."""

    @property
    def scatter_note(self) -> str:
        """One sentence on the run-to-run scatter charged, or why none was."""
        if not self.replicates:
            return (
                f"run-to-run scatter: not measured (fewer than {MIN_PAIRS + 1} runs of the "
                "baseline's settings, environment and kernel versions besides the contender); "
                "collect the baseline again to measure it"
            )
        scatter = self.kernels["run_scatter"].dropna()
        runs = ", ".join(map(str, self.replicates))
        return (
            f"run-to-run scatter of unchanged code: {scatter.min():.1%}..{scatter.max():.1%} "
            f"(RMS over the baseline's replicate runs {runs}), charged to "
            f"{len(scatter)} kernel interval(s)"
        )

    @property
    def regressions(self) -> pd.DataFrame:
        """What fails CI: slower kernels, or slower points with ``per_point``."""
        table = self.results if self.per_point else self.kernels
        return table[table["verdict"] == Verdict.SLOWER]

    @property
    def counts(self) -> dict[str, int]:
        """Point verdicts by kind."""
        found = self.results["verdict"].value_counts()
        return {v: int(found.get(v, 0)) for v in VERDICTS}

    @property
    def kernel_counts(self) -> dict[str, int]:
        found = self.kernels["verdict"].value_counts()
        return {v: int(found.get(v, 0)) for v in VERDICTS}

    @property
    def noise_sigma(self) -> float:
        """How far the points' ratios scatter: 1.4826 x MAD of their logs (descriptive only:
        with unchanged code it is the run-to-run noise, with a change it includes the change's
        own spread across kernels and sizes, so no verdict uses it)."""
        logs = np.log(self.results["ratio"].to_numpy(dtype=float))
        return float(1.4826 * np.median(np.abs(logs - np.median(logs)))) if logs.size else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "baseline": self.baseline,
            "contender": self.contender,
            "machine": self.machine,
            "threshold": self.threshold,
            "kernel_thresholds": self.kernel_thresholds,
            "alpha": self.alpha,
            "per_point": self.per_point,
            "noise_sigma": self.noise_sigma,
            "regression": bool(len(self.regressions)),
            "regressed_kernels": sorted(set(self.regressions["kernel"])),
            "kernel_counts": self.kernel_counts,
            "point_counts": self.counts,
            "only_in_baseline": self.only_baseline,
            "only_in_contender": self.only_contender,
            "environment_diff": self.environment_diff,
            "replicate_runs": list(self.replicates),
            "kernels": self.kernels.to_dict(orient="records"),
            "results": self.results.to_dict(orient="records"),
        }


def _identity(items: Iterable[T], **_: Any) -> Iterable[T]:
    return items


_POINT_FIELDS = ["samples", "flags", "footprint_bytes", "t_median", "kernel_version"]
"""The columns of each run's measurements a point's comparison reads."""


def _result_row(
    key: tuple,
    base: Mapping[str, Any],
    cont: Mapping[str, Any],
    limit: float,
    result: PointComparison,
) -> dict[str, Any]:
    """One row of :data:`RESULT_COLUMNS`: the point, both runs' medians, its comparison."""
    return {
        **dict(zip(POINT_KEY, key, strict=True)),
        "footprint_bytes": int(cont["footprint_bytes"]),
        "baseline_median": float(base["t_median"]),
        "contender_median": float(cont["t_median"]),
        "ratio": result.ratio,
        "ci_low": result.ci_low,
        "ci_high": result.ci_high,
        "p_value": result.p_value,
        "threshold": limit,
        "verdict": result.verdict,
        "version_change": version_change(base["kernel_version"], cont["kernel_version"]),
    }


def compare_runs(
    db: Database,
    baseline: str,
    contender: str,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    alpha: float = DEFAULT_ALPHA,
    kernel_thresholds: Mapping[str, float] | None = None,
    machine: str | None = None,
    host: str | None = None,
    per_point: bool = False,
    replicates: bool = True,
    track: Callable[..., Iterable[Any]] = _identity,
) -> RunComparison:
    """Compare two runs named as in :mod:`.runref`; ``UserError`` when they are not comparable.

    ``kernel_thresholds`` maps kernel names or patterns to their own thresholds
    (fractions, like ``threshold``).  ``replicates=False`` leaves the run-to-run scatter
    of the baseline's replicates (:mod:`.replicates`) out of the kernels' intervals.
    ``track`` wraps the loop over points (e.g.
    ``rich.progress.track``).
    """
    check_threshold(threshold, "threshold")
    per_kernel = dict(kernel_thresholds or {})
    for name, value in per_kernel.items():
        check_threshold(value, f"threshold of {name!r}")
    if not 0 < alpha < 1:
        raise UserError(f"alpha {alpha:g} is out of range; give a probability like 0.01")
    with db.session() as s:
        base, cont = resolve_runs(s, [baseline, contender], machine, host)
        if base.id == cont.id:
            raise UserError(
                f"{baseline!r} and {contender!r} are both run {base.id}; name two different runs"
            )
        if base.machine.node_class_id != cont.machine.node_class_id:
            raise UserError(
                f"run {base.id} is from host {base.machine.hostname} of node class "
                f"{base.machine.node_class_id} but run {cont.id} from {cont.machine.hostname} "
                f"of node class {cont.machine.node_class_id}; only runs of the same node class "
                "(the same hardware) are comparable: pick a contender of the baseline's class"
            )
        info_base, info_cont = run_summary(base), run_summary(cont)
        described = machine_summary(base.machine)
        env = environment_diff(base.environment, cont.environment)
        history = replicate_runs(s, run_record(base), run_record(cont)) if replicates else []
    require_samples(
        db,
        [base.id, cont.id],
        "compare judges the two runs' samples: compare runs that kept them, or follow the "
        "points over time with `benchdb history`",
    )
    frame = measurements_frame(db, run_ids=[base.id, cont.id], valid_only=True)
    a = frame[frame["run_id"] == base.id].set_index(POINT_KEY)
    b = frame[frame["run_id"] == cont.id].set_index(POINT_KEY)
    common = a.index.intersection(b.index)
    if common.empty:
        raise UserError(
            f"runs {base.id} and {cont.id} have no valid point in common (same kernel, shape, "
            "threads, precision and context); compare runs of the same collection settings"
        )
    keys = list(common)
    base_points = a.loc[common, _POINT_FIELDS].to_dict(orient="records")
    cont_points = b.loc[common, _POINT_FIELDS].to_dict(orient="records")
    limits = [threshold_for(key[0], threshold, per_kernel) for key in keys]
    both = list(zip(base_points, cont_points, strict=True))
    pairs = [(pa["samples"], pb["samples"]) for pa, pb in both]
    flagged = [bool(UNSTEADY_FLAGS & {*pa["flags"], *pb["flags"]}) for pa, pb in both]
    judged = compare_batch(pairs, limits, flagged, alpha=alpha)
    rows = [
        _result_row(*point)
        for point in track(
            zip(keys, base_points, cont_points, limits, judged, strict=True),
            description="comparing",
            total=len(keys),
        )
    ]
    samples = dict(zip(keys, pairs, strict=True))
    versions = dict(zip(a.index.get_level_values("kernel"), a["kernel_version"], strict=True))
    scatter = run_scatter(db, history, versions)
    results = pd.DataFrame(rows, columns=RESULT_COLUMNS).sort_values(
        ["kernel", "threads", "precision", "context", "footprint_bytes"], ignore_index=True
    )
    return RunComparison(
        baseline=info_base,
        contender=info_cont,
        machine=described,
        threshold=threshold,
        alpha=alpha,
        results=results,
        kernels=kernel_verdicts(results, samples, alpha, scatter),
        per_point=per_point,
        kernel_thresholds=per_kernel,
        environment_diff=env,
        only_baseline=len(a.index.difference(b.index)),
        only_contender=len(b.index.difference(a.index)),
        replicates=tuple(history) if scatter else (),
    )
