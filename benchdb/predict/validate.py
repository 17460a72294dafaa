"""How good are the predictions?  Leave-one-out and an independent sweep (paper 003 Fig. 4).

Errors are in predicted *time*: ``100 x (T_pred / T_meas - 1) = 100 x (P_meas / P_pred - 1)``.

* **Leave-one-out** over the stored footprints of the fitting runs: each
  interior point is dropped, the method refitted on the rest and asked for the
  dropped footprint (the two end points are left out: predicting them would
  test extrapolation, which every answer flags anyway).  The baselines are
  fitted per machine, not per curve, so their column is their in-sample error
  at the same points.
* **Independent sweep**: the methods (with their row-length correction,
  :mod:`.aspect`) and baselines are fitted on the *fit runs* and checked
  against every measurement of the *check runs* whose shape was not fitted
  and lies inside the fitted range (points outside it test extrapolation;
  they are counted, kept in ``check_points`` and left out of the statistics).
  Which runs: ``fit_runs``/``check_runs`` if given; else the runs tagged
  ``validation`` are checked against all others; else the most recent run is
  checked against all earlier ones.

Per kernel and method: the number of points, the median and 90th percentile
absolute % error, the maximum and the worst points.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import UserError
from . import aspect
from .baselines import BASELINES
from .basis import rate_basis
from .lookup import fit_method, leave_one_out, method_rates
from .machine_data import MachineData, machine_data
from .methods import METHODS
from .source import MachineCaches, machine_rows, resolve_machine_caches
from .store import cached_fit

VALIDATION_TAG = "validation"
WORST = 3


@dataclass(frozen=True)
class RunSplit:
    fit_runs: tuple[int, ...]
    check_runs: tuple[int, ...]
    rule: str


def split_runs(
    rows: Sequence[dict[str, Any]],
    fit_runs: Sequence[int] | None,
    check_runs: Sequence[int] | None,
) -> RunSplit:
    """Which runs to fit on and which to check against (see the module docstring)."""
    runs = {int(r["run_id"]): r for r in rows}
    for rid in [*(fit_runs or []), *(check_runs or [])]:
        if rid not in runs:
            raise UserError(
                f"run {rid} has no measurements here; runs with data: "
                f"{', '.join(map(str, sorted(runs)))}"
            )
    if check_runs:
        fit = fit_runs or [r for r in runs if r not in set(check_runs)]
        return RunSplit(tuple(sorted(fit)), tuple(sorted(check_runs)), "given")
    if fit_runs:
        return RunSplit(
            tuple(sorted(fit_runs)),
            tuple(r for r in sorted(runs) if r not in set(fit_runs)),
            "given",
        )
    tagged = sorted(r for r, row in runs.items() if VALIDATION_TAG in (row["run_tags"] or []))
    if tagged and len(tagged) < len(runs):
        return RunSplit(
            tuple(r for r in sorted(runs) if r not in tagged), tuple(tagged), "tagged validation"
        )
    if len(runs) < 2:
        return RunSplit(tuple(runs), (), "single run: no independent sweep")
    latest = max(runs.values(), key=lambda r: (r["run_started_at"], r["run_id"]))["run_id"]
    return RunSplit(tuple(r for r in sorted(runs) if r != latest), (int(latest),), "latest run")


def _summary(errors: list[tuple[float, dict[str, Any]]]) -> dict[str, Any]:
    if not errors:
        return {
            "n": 0,
            "median_abs_pct": None,
            "p90_abs_pct": None,
            "max_abs_pct": None,
            "worst": [],
        }
    abs_err = np.abs([e for e, _ in errors])
    order = np.argsort(-abs_err)[:WORST]
    return {
        "n": len(errors),
        "median_abs_pct": float(np.median(abs_err)),
        "p90_abs_pct": float(np.percentile(abs_err, 90)),
        "max_abs_pct": float(abs_err.max()),
        "worst": [{**errors[i][1], "error_pct": float(errors[i][0])} for i in order],
    }


def _pct(measured: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    return 100.0 * (np.asarray(measured) / np.asarray(predicted) - 1.0)


def _check_points(
    rows: Sequence[dict[str, Any]], data: MachineData, kernel: str
) -> list[dict[str, Any]]:
    """Check-run measurements of ``kernel`` whose shape was not fitted (nor, for a
    square, its footprint)."""
    kc = data.curves[kernel]
    fitted = set(kc.curve.footprint.tolist())
    fitted_shapes = {s for shapes in kc.curve.shapes for s in shapes}
    fitted_shapes.update(kc.curve.rectangles.shapes)
    out = []
    for r in rows:
        if r["kernel"] != kernel or not r["valid"] or r["context"] != kc.context:
            continue
        a = float(aspect.log_aspect(kc.basis.geometry, np.array([list(r["shape"])]))[0])
        square = abs(a) <= aspect.SQUARE_TOL
        if r["shape_key"] in fitted_shapes or (square and float(r["footprint_bytes"]) in fitted):
            continue
        out.append(
            {
                "shape": r["shape_key"],
                "footprint_bytes": float(r["footprint_bytes"]),
                "log_aspect": a,
                "rate": kc.basis.work_per_point * float(r["points"]) / float(r["t_median"]),
                "flags": list(r["flags"] or []),
                "run_id": int(r["run_id"]),
            }
        )
    return out


def validate(
    db: Any,
    *,
    machine: str | None = None,
    kernels: Sequence[str] | None = None,
    methods: Sequence[str] | None = None,
    threads: int = 1,
    precision: str = "float64",
    environment_id: int | None = None,
    fit_runs: Sequence[int] | None = None,
    check_runs: Sequence[int] | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Cross-validation and independent-sweep errors per kernel and method (see module doc)."""
    for k in kernels or []:
        rate_basis(k, precision, db)
    names = list(methods or [*METHODS, *BASELINES])
    for n in names:
        if n not in METHODS and n not in BASELINES:
            raise UserError(f"unknown method {n!r}; use: {', '.join([*METHODS, *BASELINES])}")
    mc: MachineCaches = resolve_machine_caches(db, machine)
    rows = [
        r for r in machine_rows(db, mc.machine_id, precision=precision) if r["threads"] == threads
    ]
    if not rows:
        raise UserError(
            f"no {precision} measurements with {threads} thread(s) on {mc.hostname}; "
            "run `benchdb collect` first"
        )
    split = split_runs(rows, fit_runs, check_runs)
    data = machine_data(
        db,
        rows,
        mc,
        threads=threads,
        precision=precision,
        environment_id=environment_id,
        run_ids=split.fit_runs,
    )
    check_rows = [r for r in rows if r["run_id"] in set(split.check_runs)]
    wanted = [k for k in (kernels or sorted(data.curves)) if k in data.curves]
    if kernels and not wanted:
        raise UserError(f"no fitting data for {', '.join(kernels)} in runs {split.fit_runs}")
    baseline_params = {
        b: cached_fit(
            db,
            kind=f"baseline.{b}",
            subject=f"machine/t{threads}/{precision}",
            machine_id=mc.machine_id,
            environment_id=data.environment_id,
            data={k: kc.curve.fingerprint_data() for k, kc in data.curves.items()},
            selector={"run_ids": list(split.fit_runs), "threads": threads, "precision": precision},
            fit=lambda b=b: BASELINES[b].fit(data),
        )[0]
        for b in names
        if b in BASELINES
    }
    results, points = [], []
    for kernel in wanted:
        if progress:
            progress(kernel)
        kc = data.curves[kernel]
        checks = _check_points(check_rows, data, kernel)
        check_fp = np.array([c["footprint_bytes"] for c in checks], dtype=float)
        check_a = np.array([c["log_aspect"] for c in checks], dtype=float)
        for name in names:
            if name in METHODS:
                method = METHODS[name]
                if len(kc.curve) < method.MIN_POINTS:
                    continue
                loo = 100.0 * leave_one_out(method, kc.curve)
                params = fit_method(method, kc.curve)
                pred_check = method_rates(method, params, np.log(check_fp), check_a)[0]
                loo_kind = "loo"
            else:
                base = BASELINES[name]
                params = baseline_params[name]
                loo = _pct(kc.curve.rate, base.evaluate(params, kc.basis, kc.curve.footprint))
                loo[[0, -1]] = np.nan
                pred_check = base.evaluate(params, kc.basis, check_fp)
                loo_kind = "in-sample"
            loo_err = [
                (
                    float(e),
                    {
                        "shape": ",".join(kc.curve.shapes[i]),
                        "footprint_bytes": float(kc.curve.footprint[i]),
                    },
                )
                for i, e in enumerate(loo)
                if np.isfinite(e)
            ]
            check_err, outside = [], 0
            lo, hi = kc.curve.footprint[0], kc.curve.footprint[-1]
            for c, p in zip(checks, pred_check, strict=True):
                if not np.isfinite(p) or p <= 0:
                    continue
                e = float(_pct(c["rate"], p))
                extrapolated = not lo <= c["footprint_bytes"] <= hi
                points.append(
                    {
                        "kernel": kernel,
                        "method": name,
                        **c,
                        "predicted_rate": float(p),
                        "error_pct": e,
                        "extrapolated": extrapolated,
                    }
                )
                if extrapolated:
                    outside += 1
                else:
                    check_err.append((e, {k: c[k] for k in ("shape", "footprint_bytes", "flags")}))
            results.append(
                {
                    "kernel": kernel,
                    "method": name,
                    "kind": "method" if name in METHODS else "baseline",
                    "rate_unit": kc.basis.unit,
                    "loo_kind": loo_kind,
                    "loo": _summary(loo_err),
                    "check": {**_summary(check_err), "extrapolated_excluded": outside},
                }
            )
    _mark_best(results)
    return {
        "machine_id": mc.machine_id,
        "environment_id": data.environment_id,
        "threads": threads,
        "precision": precision,
        "fit_runs": list(split.fit_runs),
        "check_runs": list(split.check_runs),
        "split_rule": split.rule,
        "results": results,
        "check_points": points,
        "baselines": baseline_params,
    }


def _mark_best(results: list[dict[str, Any]]) -> None:
    """Flag, per kernel, the method (not baseline) with the lowest check (else LOO) median."""
    by_kernel: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        if r["kind"] == "method":
            by_kernel.setdefault(r["kernel"], []).append(r)
    for rs in by_kernel.values():

        def score(r: dict[str, Any]) -> float:
            m = r["check"]["median_abs_pct"]
            m = r["loo"]["median_abs_pct"] if m is None else m
            return float("inf") if m is None else m

        best = min(rs, key=score)
        for r in rs:
            r["best"] = r is best
