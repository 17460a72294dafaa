"""How good are the predictions?  Leave-one-out and an independent sweep (paper 003 Fig. 4).

Errors are in predicted *time*: ``100 x (T_pred / T_meas - 1) = 100 x (P_meas / P_pred - 1)``.

A method is checked on the whole answer path of ``benchdb predict``
(:class:`.lookup.Lookup`: blocks with the query's own rows, else the square
curve with the row-length correction, else the curve alone), not its
interpolation alone; each checked point says which layer answered it.

* **Leave-one-out** over the measured shapes of the fitting runs: each shape
  (all its measurements) is left out, every layer refitted without it
  (:meth:`.lookup.Lookup.without`) and asked for it.  Shapes the rest would
  extrapolate to are counted and left out (every answer flags extrapolation
  anyway).  The baselines are fitted per machine, not per curve, so their
  column is their in-sample error at the curve's points.
* **Independent sweep**: the lookup is fitted on the *fit runs* and checked
  against every measurement of the *check runs* whose shape was not fitted
  and lies inside the fitted range (points outside it test extrapolation;
  they are counted, kept in ``check_points`` and left out of the statistics).
  Which runs: ``fit_runs``/``check_runs`` if given; else the runs tagged
  ``validation`` are checked against all others; else the most recent run is
  checked against all earlier ones.

Per kernel and method: the number of points, the median and 90th percentile
absolute % error, the maximum, the worst points, how many points each layer
answered, and beside the error the repeat noise of the same points
(:mod:`.noise`: the spread between their passes) with the ratios error/noise
(median and p90): near 1 the predictions are as good as measuring again.  Where
the same points were measured in two or more collections (the check shapes
collected twice, ``benchdb collect --tag validation`` run again), the
test-retest scatter between those collections is reported beside it with its
own ratios: the floor a user who measures the shape again later meets.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..db.fit_cache import cached_fit
from ..db.measurements import machine_rows, measured_runs, widest_environment
from ..errors import UserError
from ..plugin_registry import check_names
from . import aspect
from .baselines import BASELINES
from .basis import rate_basis
from .holdout import Checked, answer_path_loo, error_pct
from .lookup import bare_lookup
from .machine_data import KernelCurve, MachineData, machine_data
from .methods import METHODS
from .noise import AgainstNoise, RepeatNoise, repeat_noise, retest_noise
from .source import MachineCaches, resolve_machine_caches

if TYPE_CHECKING:
    from ..db.engine import Database

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
    """Which runs to fit on and which to check against (see the module docstring);
    ``rows`` name the runs with data (``run_id``, ``run_tags``, ``run_started_at``)."""
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


def _summary(errors: list[Checked]) -> dict[str, Any]:
    layers: dict[str, int] = {}
    for c in errors:
        if "layer" in c.about:
            layers[c.about["layer"]] = layers.get(c.about["layer"], 0) + 1
    errs = [c.error_pct for c in errors]
    against = asdict(AgainstNoise.of(errs, [c.noise for c in errors]))
    retest = asdict(AgainstNoise.of(errs, [c.retest for c in errors]))
    if not errors:
        return {
            "n": 0,
            "median_abs_pct": None,
            "p90_abs_pct": None,
            "max_abs_pct": None,
            "worst": [],
            "layers": layers,
            "noise": against,
            "retest": retest,
        }
    abs_err = np.abs([c.error_pct for c in errors])
    order = np.argsort(-abs_err)[:WORST]
    return {
        "n": len(errors),
        "median_abs_pct": float(np.median(abs_err)),
        "p90_abs_pct": float(np.percentile(abs_err, 90)),
        "max_abs_pct": float(abs_err.max()),
        "worst": [
            {
                **errors[i].about,
                "error_pct": float(errors[i].error_pct),
                "noise_pct": None if errors[i].noise is None else 100.0 * errors[i].noise.rel,
            }
            for i in order
        ],
        "layers": layers,
        "noise": against,
        "retest": retest,
    }


def _check_points(
    rows: Sequence[dict[str, Any]], data: MachineData, kernel: str
) -> list[dict[str, Any]]:
    """Check-run measurements of ``kernel`` whose shape was not fitted (nor, for a
    square, its footprint)."""
    kc = data.curves[kernel]
    same_point: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        if r["kernel"] == kernel and r["valid"] and r["context"] == kc.context:
            same_point.setdefault(str(r["shape_key"]), []).append(r)
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
                "extents": [int(v) for v in r["shape"]],
                "footprint_bytes": float(r["footprint_bytes"]),
                "log_aspect": a,
                "rate": kc.basis.work_per_point * float(r["points"]) / float(r["t_median"]),
                "flags": list(r["flags"] or []),
                "run_id": int(r["run_id"]),
                "noise": repeat_noise([r]),
                "retest": retest_noise(same_point[str(r["shape_key"])]),
            }
        )
    return out


def _point_noise(kc: KernelCurve) -> list[tuple[RepeatNoise | None, RepeatNoise | None]]:
    """Per point of ``kc``'s curve, the repeat noise and the test-retest scatter of the
    measurements it combines."""
    by_id = {int(r["measurement_id"]): r for r in kc.selection.rows}
    point_rows = [[by_id[m] for m in mids] for mids in kc.curve.measurement_ids]
    return [(repeat_noise(rows), retest_noise(rows)) for rows in point_rows]


def validate(
    db: Database,
    *,
    machine: str | None = None,
    host: str | None = None,
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
    names = list(methods or [*METHODS.names(), *BASELINES.names()])
    check_names(names, METHODS, BASELINES)
    mc: MachineCaches = resolve_machine_caches(db, machine, host)
    runs = measured_runs(db, mc.scope, precision=precision, threads=threads)
    if not runs:
        raise UserError(
            f"no {precision} measurements with {threads} thread(s) on {mc.scope.label}; "
            "run `benchdb collect` first"
        )
    split = split_runs(runs, fit_runs, check_runs)
    if environment_id is None:
        environment_id = widest_environment(
            db,
            mc.scope,
            precision=precision,
            threads=threads,
            run_ids=split.fit_runs if fit_runs else None,
            exclude=() if fit_runs else split.check_runs,
        )
    if environment_id is None:
        raise UserError(f"no {precision} measurements on {mc.scope.label} in the fitting runs")
    selected = {"precision": precision, "threads": threads}
    eligible = set(split.fit_runs)
    fit_rows = [
        r
        for r in machine_rows(db, mc.scope, environment_id=environment_id, **selected)
        if r["run_id"] in eligible
    ]
    used_runs = sorted({int(r["run_id"]) for r in fit_rows})
    check_rows = machine_rows(db, mc.scope, run_ids=split.check_runs, **selected)
    data = machine_data(
        db, fit_rows, mc, threads=threads, precision=precision, environment_id=environment_id
    )
    wanted = [k for k in (kernels or sorted(data.curves)) if k in data.curves]
    if kernels and not wanted:
        raise UserError(f"no fitting data for {', '.join(kernels)} in runs {split.fit_runs}")
    baseline_params = {
        b: cached_fit(
            db,
            kind=f"baseline.{b}",
            subject=f"machine/t{threads}/{precision}",
            scope=mc.scope,
            environment_id=data.environment_id,
            data={k: kc.curve.fingerprint_data() for k, kc in data.curves.items()},
            selector={"run_ids": used_runs, "threads": threads, "precision": precision},
            fit=lambda b=b: BASELINES.get(b).fit(data),
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
        check_shapes = np.array([c["extents"] for c in checks], dtype=float)
        check_fp = np.array([c["footprint_bytes"] for c in checks], dtype=float)
        for name in names:
            if name in METHODS:
                method = METHODS.get(name)
                if len(kc.curve) < method.min_points:
                    continue
                lookup = bare_lookup(kc.selection, kc.basis, kc.curve, method)
                loo_err, loo_outside = answer_path_loo(lookup)
                if checks:
                    answer = lookup.evaluate(check_shapes)
                    pred_check, beyond, layer = answer.rate, answer.extrapolated, answer.layer
                else:
                    pred_check = beyond = layer = np.zeros(0)
                loo_kind = "loo"
            else:
                base = BASELINES.get(name)
                params = baseline_params[name]
                loo = error_pct(kc.curve.rate, base.evaluate(params, kc.basis, kc.curve.footprint))
                point_noise = _point_noise(kc)
                loo_err = [
                    Checked(
                        float(e),
                        {
                            "shape": ",".join(kc.curve.shapes[i]),
                            "footprint_bytes": float(kc.curve.footprint[i]),
                        },
                        *point_noise[i],
                    )
                    for i, e in enumerate(loo)
                    if np.isfinite(e) and 0 < i < len(loo) - 1
                ]
                loo_outside = 0
                pred_check = base.evaluate(params, kc.basis, check_fp)
                lo, hi = kc.curve.footprint[0], kc.curve.footprint[-1]
                beyond = ~((lo <= check_fp) & (check_fp <= hi))
                layer = None
                loo_kind = "in-sample"
            check_err, outside = [], 0
            for i, (c, p) in enumerate(zip(checks, pred_check, strict=True)):
                if not np.isfinite(p) or p <= 0:
                    continue
                e = float(error_pct(c["rate"], p))
                extrapolated = bool(beyond[i])
                about = {k: c[k] for k in ("shape", "footprint_bytes", "flags")}
                if layer is not None:
                    about["layer"] = str(layer[i])
                noise, retest = c["noise"], c["retest"]
                points.append(
                    {
                        "kernel": kernel,
                        "method": name,
                        **{k: v for k, v in c.items() if k not in ("extents", "noise", "retest")},
                        **({"layer": about["layer"]} if "layer" in about else {}),
                        "predicted_rate": float(p),
                        "error_pct": e,
                        "noise_pct": None if noise is None else 100.0 * noise.rel,
                        "retest_pct": None if retest is None else 100.0 * retest.rel,
                        "extrapolated": extrapolated,
                    }
                )
                if extrapolated:
                    outside += 1
                else:
                    check_err.append(Checked(e, about, noise, retest))
            results.append(
                {
                    "kernel": kernel,
                    "method": name,
                    "kind": "method" if name in METHODS else "baseline",
                    "rate_unit": kc.basis.unit,
                    "loo_kind": loo_kind,
                    "loo": {**_summary(loo_err), "extrapolated_excluded": loo_outside},
                    "check": {**_summary(check_err), "extrapolated_excluded": outside},
                }
            )
    _mark_best(results)
    return {
        **mc.scope.to_dict(),
        "environment_id": data.environment_id,
        "threads": threads,
        "precision": precision,
        "fit_runs": used_runs,
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
