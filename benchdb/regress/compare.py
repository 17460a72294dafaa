"""``compare``: every point two runs have in common, judged by :mod:`.ab`, then per kernel.

A point is a (kernel, shape, threads, precision, context); only valid
measurements count.  Each point gets a verdict from :func:`.ab.compare_samples`.

The *kernel* verdict (per kernel, threads, precision and context, over its
shapes) is what fails CI: a kernel is ``slower`` when a strict majority of
its points are ``slower`` and the median of its points' ratios exceeds the
threshold (``faster`` alike); ``noisy`` when any point is noisy, slower or
faster without such a majority; ``unchanged`` otherwise.  Why: a point's
samples are taken back to back, so a burst of load from another process on
a shared machine slows all of them at once and the test of that point finds
it "significant" -- they are not independent replicates of the run.  A code,
compiler or library change slows a kernel across its sizes; interference
hits the points measured at that moment.  Measured on the 2-core development
VM, unchanged code gave single points 0.25x to 3.6x apart between runs
(benchmarks/false_positive_rate.py).  A kernel measured at one shape falls
back to its point's verdict.

**Run-to-run noise floor.**  The spread of all common points' log ratios
measures how much the two runs differ when nothing changed (most points are
unchanged, so a robust spread ignores the changed few):
``sigma_run = 1.4826 * MAD(log ratio)`` over at least
:data:`MIN_POINTS_FOR_FLOOR` points.  A point is ``slower``/``faster`` only if
``|log ratio| > NOISE_Z * sigma_run`` as well (:data:`NOISE_Z` = 3), else it
is ``noisy``.  A change common to all points (a slower compiler) moves the
median, not the spread, and is still reported.  ``per_point=True`` (``--per-point``) fails on any
slower point instead, for quiet dedicated machines.

Only runs of the same machine (same fingerprint) are comparable: across
machines a difference says nothing about the code.  The environment difference
between the two runs is part of the answer, since it is usually the cause of
a change; so is a kernel whose version changed between them (a user's program
or plugin rebuilt with other code): ``version_change`` names both versions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from ..db.engine import Database
from ..errors import UserError
from ..query import measurements_frame
from .ab import DEFAULT_ALPHA, DEFAULT_THRESHOLD, VERDICTS, compare_samples
from .describe import machine_summary, run_summary
from .envdiff import environment_diff
from .runref import resolve_runs

POINT_KEY = ["kernel", "shape_key", "threads", "precision", "context"]
RESULT_COLUMNS = [
    *POINT_KEY,
    "footprint_bytes",
    "baseline_median",
    "contender_median",
    "ratio",
    "ci_low",
    "ci_high",
    "p_value",
    "verdict",
    "version_change",
]

KERNEL_KEY = ["kernel", "threads", "precision", "context"]
KERNEL_COLUMNS = [
    *KERNEL_KEY, "points", "slower", "faster", "noisy", "median_ratio", "verdict", "version_change",
]  # fmt: skip

NOISE_Z = 3.0
"""A change must exceed this many run-to-run noise deviations (robust sigma of log ratios)."""

MIN_POINTS_FOR_FLOOR = 8
"""Fewer common points than this give no noise floor (too few to estimate a spread)."""

T = TypeVar("T")


def run_noise(ratios: pd.Series) -> float:
    """Robust std of the log ratios (1.4826 x MAD): 0 with too few points to tell."""
    if len(ratios) < MIN_POINTS_FOR_FLOOR:
        return 0.0
    logs = np.log(ratios.to_numpy(dtype=float))
    return float(1.4826 * np.median(np.abs(logs - np.median(logs))))


def apply_noise_floor(results: pd.DataFrame, sigma: float) -> pd.DataFrame:
    """Points whose change is within ``NOISE_Z * sigma`` of none become ``noisy``."""
    within = np.abs(np.log(results["ratio"].to_numpy(dtype=float))) <= NOISE_Z * sigma
    changed = results["verdict"].isin(["slower", "faster"]).to_numpy()
    out = results.copy()
    out.loc[within & changed, "verdict"] = "noisy"
    return out


def kernel_verdicts(results: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """One row per kernel configuration: point counts, median ratio and the kernel verdict."""
    rows = []
    for key, group in results.groupby(KERNEL_KEY, sort=True):
        n = len(group)
        counts = group["verdict"].value_counts()
        slower, faster = int(counts.get("slower", 0)), int(counts.get("faster", 0))
        noisy = int(counts.get("noisy", 0))
        median = float(group["ratio"].median())
        if 2 * slower > n and median > 1 + threshold:
            verdict = "slower"
        elif 2 * faster > n and median < 1 / (1 + threshold):
            verdict = "faster"
        elif slower or faster or noisy:
            verdict = "noisy"
        else:
            verdict = "unchanged"
        rows.append(
            {
                **dict(zip(KERNEL_KEY, key, strict=True)),
                "points": n,
                "slower": slower,
                "faster": faster,
                "noisy": noisy,
                "median_ratio": median,
                "verdict": verdict,
                "version_change": ", ".join(sorted(set(group["version_change"]) - {""})),
            }
        )
    return pd.DataFrame(rows, columns=KERNEL_COLUMNS)


@dataclass
class RunComparison:
    """Baseline vs contender: one row per common point in ``results``, per kernel in ``kernels``."""

    baseline: dict[str, Any]
    contender: dict[str, Any]
    machine: dict[str, Any]
    threshold: float
    alpha: float
    results: pd.DataFrame
    kernels: pd.DataFrame
    per_point: bool = False
    noise_sigma: float = 0.0
    environment_diff: list[dict[str, Any]] = field(default_factory=list)
    only_baseline: int = 0
    only_contender: int = 0

    @property
    def regressions(self) -> pd.DataFrame:
        """What fails CI: slower kernels, or slower points with ``per_point``."""
        table = self.results if self.per_point else self.kernels
        return table[table["verdict"] == "slower"]

    @property
    def counts(self) -> dict[str, int]:
        """Point verdicts by kind."""
        found = self.results["verdict"].value_counts()
        return {v: int(found.get(v, 0)) for v in VERDICTS}

    @property
    def kernel_counts(self) -> dict[str, int]:
        found = self.kernels["verdict"].value_counts()
        return {v: int(found.get(v, 0)) for v in VERDICTS}

    def to_dict(self) -> dict[str, Any]:
        return {
            "baseline": self.baseline,
            "contender": self.contender,
            "machine": self.machine,
            "threshold": self.threshold,
            "alpha": self.alpha,
            "per_point": self.per_point,
            "noise_sigma": self.noise_sigma,
            "noise_floor_ratio": float(np.exp(NOISE_Z * self.noise_sigma)),
            "regression": bool(len(self.regressions)),
            "regressed_kernels": sorted(set(self.regressions["kernel"])),
            "kernel_counts": self.kernel_counts,
            "point_counts": self.counts,
            "only_in_baseline": self.only_baseline,
            "only_in_contender": self.only_contender,
            "environment_diff": self.environment_diff,
            "kernels": self.kernels.to_dict(orient="records"),
            "results": self.results.to_dict(orient="records"),
        }


def version_change(before: str, after: str) -> str:
    """``"1a2b3c4d->5e6f7a8b"`` when a kernel's version differs between two runs, else ``""``."""
    return "" if before == after else f"{before[:8]}->{after[:8]}"


def _identity(items: Iterable[T], **_: Any) -> Iterable[T]:
    return items


def compare_runs(
    db: Database,
    baseline: str,
    contender: str,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    alpha: float = DEFAULT_ALPHA,
    machine: str | None = None,
    per_point: bool = False,
    track: Callable[..., Iterable[Any]] = _identity,
) -> RunComparison:
    """Compare two runs named as in :mod:`.runref`; ``UserError`` when they are not comparable.

    ``track`` wraps the loop over points (e.g. ``rich.progress.track``).
    """
    if not 0 < threshold < 10:
        raise UserError(f"threshold {threshold:g} is out of range; give a fraction like 0.05")
    if not 0 < alpha < 1:
        raise UserError(f"alpha {alpha:g} is out of range; give a probability like 0.01")
    with db.session() as s:
        base, cont = resolve_runs(s, [baseline, contender], machine)
        if base.id == cont.id:
            raise UserError(
                f"{baseline!r} and {contender!r} are both run {base.id}; name two different runs"
            )
        if base.machine_id != cont.machine_id:
            raise UserError(
                f"run {base.id} is from machine {base.machine.hostname} "
                f"({base.machine.fingerprint[:12]}) but run {cont.id} from "
                f"{cont.machine.hostname} ({cont.machine.fingerprint[:12]}); only runs of the "
                "same machine are comparable: pick a contender measured on the baseline's machine"
            )
        info_base, info_cont = run_summary(base), run_summary(cont)
        host = machine_summary(base.machine)
        env = environment_diff(base.environment, cont.environment)
    frame = measurements_frame(db, run_ids=[base.id, cont.id], valid_only=True)
    a = frame[frame["run_id"] == base.id].set_index(POINT_KEY)
    b = frame[frame["run_id"] == cont.id].set_index(POINT_KEY)
    common = a.index.intersection(b.index)
    if common.empty:
        raise UserError(
            f"runs {base.id} and {cont.id} have no valid point in common (same kernel, shape, "
            "threads, precision and context); compare runs of the same collection settings"
        )
    rows = []
    for key in track(list(common), description="comparing"):
        pa, pb = a.loc[key], b.loc[key]
        flagged = "noisy" in pa["flags"] or "noisy" in pb["flags"]
        result = compare_samples(
            pa["samples"], pb["samples"], threshold=threshold, alpha=alpha, flagged_noisy=flagged
        )
        rows.append(
            {
                **dict(zip(POINT_KEY, key, strict=True)),
                "footprint_bytes": int(pb["footprint_bytes"]),
                "baseline_median": float(pa["t_median"]),
                "contender_median": float(pb["t_median"]),
                "ratio": result.ratio,
                "ci_low": result.ci_low,
                "ci_high": result.ci_high,
                "p_value": result.p_value,
                "verdict": result.verdict,
                "version_change": version_change(pa["kernel_version"], pb["kernel_version"]),
            }
        )
    results = pd.DataFrame(rows, columns=RESULT_COLUMNS).sort_values(
        ["kernel", "threads", "precision", "context", "footprint_bytes"], ignore_index=True
    )
    sigma = run_noise(results["ratio"])
    results = apply_noise_floor(results, sigma)
    return RunComparison(
        baseline=info_base,
        contender=info_cont,
        machine=host,
        threshold=threshold,
        alpha=alpha,
        results=results,
        kernels=kernel_verdicts(results, threshold),
        per_point=per_point,
        noise_sigma=sigma,
        environment_diff=env,
        only_baseline=len(a.index.difference(b.index)),
        only_contender=len(b.index.difference(a.index)),
    )
