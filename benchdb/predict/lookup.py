"""A fitted lookup curve and its vectorised evaluation (paper 003 eq. 8-9).

    T = work per point x points x N_itr / P(footprint)

(eq. 8 is printed as ``P x flops x ...``; dimensionally P divides.)  Every
answer carries the method, the two measured footprints that bracket it, an
uncertainty and an ``extrapolated`` flag.

Uncertainty: the relative IQR ``s`` of the samples at the bracketing points,
propagated through the interpolation weight ``w`` (position between them in
log footprint) as for independent errors,
``sqrt(((1-w) s_lo)^2 + (w s_hi)^2)``, plus the method's own fit error
(``fit_rms_rel``, non-zero for the ``logcurve`` regression) in quadrature.
The interpolation error between measured sizes is a separate column,
``interpolation_rel``: the method's leave-one-out error (:func:`leave_one_out`,
what ``benchdb validate`` reports per kernel) at the two measured points that
bracket the answer, the smaller of the two.  Each of those left-out spans
contains the answer's interval, twice as wide, so it estimates (from above,
for a smooth bend or a kink inside the interval) what interpolating across the
interval misses; the smaller one is the tighter estimate, and it is not
inflated by a bend in the neighbouring interval.  Where the curve bends between
measured sizes -- a cache edge -- it is large, and the noise spread says
nothing about it (docs/findings/lookup-layers.md).  NaN where no bracketing point is interior.

A non-square block's rate is the square curve's times the row-length
correction of :mod:`.aspect`, fitted with the method from the calibration
rectangles; ``aspect_extrapolated`` says when its aspect lies beyond them.
Where measured blocks with the query's own row length bracket it closely, they
answer instead (:mod:`.same_rows`; ``same_rows`` says so, and the bracketing
footprints, spread and flags are theirs); ``interpolation_rel`` stays the
curve's, an estimate from above for so short a span.

Each answer names the layer that produced it (:class:`AnswerLayer`, the
``layer`` column): ``same_rows``, ``aspect`` (the square curve times a
row-length correction fitted from measured rectangles) or ``curve`` (the
square curve alone); ``method`` names the curve's method whatever the layer.
``benchdb validate`` checks this same answer path (:meth:`Lookup.without`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from ..db.fit_cache import cached_fit
from ..errors import UserError
from . import aspect
from .answers import Answers
from .basis import Blocks, RateBasis, rate_basis
from .curve import Curve, PointMemo, build_curve
from .methods import METHODS, Method
from .same_rows import SameRowCurves
from .source import Selection, read_selection, resolve_machine_caches

if TYPE_CHECKING:
    from ..db.engine import Database


class AnswerLayer(StrEnum):
    """Which layer of the lookup answered a query (see the module docstring)."""

    SAME_ROWS = "same_rows"
    ASPECT = "aspect"
    CURVE = "curve"


@dataclass(frozen=True)
class Lookup:
    """One kernel's measured curve with one method's fit, ready to evaluate."""

    selection: Selection
    basis: RateBasis
    curve: Curve
    method: Method
    params: dict[str, Any]
    model_id: int | None = None
    reused: bool = False
    row_curves: SameRowCurves | None = None  # known already (see :meth:`without`)
    # curve points combined by :meth:`without`, shared with the lookups it returns
    held_out_points: PointMemo = field(default_factory=dict, repr=False, compare=False)

    @cached_property
    def same_rows(self) -> SameRowCurves | None:
        """The selection's blocks grouped by row length (:mod:`.same_rows`)."""
        if self.row_curves is not None:
            return self.row_curves
        return SameRowCurves.build(
            self.selection.rows,
            self.basis.work_per_point,
            self.basis.geometry.contiguous_axis,
            self.curve,
        )

    def rates(self, footprint: np.ndarray) -> np.ndarray:
        """The square curve's fitted rates at ``footprint`` (bytes)."""
        return self.method.evaluate(self.params, np.log(footprint))

    def evaluate(self, shapes: np.ndarray | Blocks, iterations: Any = 1) -> Answers:
        """The answers for each row of ``shapes`` (n, ndim), or of the :class:`Blocks`
        the caller sized already (with this lookup's basis: else they are sized again)."""
        blocks = shapes if isinstance(shapes, Blocks) else self.basis.blocks(shapes)
        if blocks.basis is not self.basis:  # sized by another version's definition
            blocks = self.basis.blocks(blocks.shapes)
        shapes, points, footprint = blocks.shapes, blocks.points, blocks.footprint
        iters = np.broadcast_to(np.asarray(iterations, dtype=float), len(shapes))
        if (iters <= 0).any():
            raise UserError("iterations must be a positive number")
        u = np.log(footprint)
        log_aspect = aspect.log_aspect(self.basis.geometry, shapes)
        rate, aspect_beyond = method_rates(self.method, self.params, u, log_aspect)
        known = self.curve.log_x
        n = len(known)
        idx = np.searchsorted(known, u)  # interval: lo = idx - 1, hi = idx
        lo, hi = np.clip(idx - 1, 0, n - 1), np.clip(idx, 0, n - 1)
        span = known[hi] - known[lo]
        w = np.divide(u - known[lo], span, out=np.zeros_like(u), where=span > 0)
        s = self.curve.spread
        unc = np.sqrt(((1 - w) * s[lo]) ** 2 + (w * s[hi]) ** 2 + self.params["fit_rms_rel"] ** 2)
        eps = 1e-9
        extrap = (u < known[0] - eps) | (u > known[-1] + eps)
        flags = _interval_flags(self.curve)[idx]
        interp = _interval_interpolation(self.params["loo_rel"])[idx]
        lo_fp, hi_fp = self.curve.footprint[lo], self.curve.footprint[hi]
        own = self.same_rows.answer(shapes, footprint) if self.same_rows else None
        layer = np.where(
            aspect.corrected(self.params["aspect"], log_aspect),
            AnswerLayer.ASPECT.value,
            AnswerLayer.CURVE.value,
        ).astype(object)
        if own is not None and own.found.any():
            f = own.found
            rate, unc = np.where(f, own.rate, rate), np.where(f, own.spread, unc)
            lo_fp = np.where(f, own.lo_footprint, lo_fp)
            hi_fp = np.where(f, own.hi_footprint, hi_fp)
            flags = np.where(f, own.flags, flags)
            extrap, aspect_beyond = extrap & ~f, aspect_beyond & ~f
            layer[f] = AnswerLayer.SAME_ROWS.value
        time = self.basis.work_per_point * points * iters / rate
        sel = self.selection
        return Answers(
            shapes=shapes,
            kernel=sel.kernel,
            points=points,
            footprint_bytes=footprint,
            iterations=iters,
            threads=sel.threads,
            precision=sel.precision,
            method=self.method.name,
            layer=layer,
            rate=rate,
            rate_unit=self.basis.unit,
            time_s=time,
            uncertainty_rel=unc,
            interpolation_rel=interp,
            extrapolated=extrap,
            log_aspect=log_aspect,
            aspect_extrapolated=aspect_beyond,
            same_rows=own.found if own is not None else np.zeros(len(shapes), dtype=bool),
            lo_footprint_bytes=lo_fp,
            hi_footprint_bytes=hi_fp,
            point_flags=flags,
            environment_id=sel.environment_id,
            model_id=self.model_id,
        )

    def without(self, shape_keys: set[str]) -> Lookup:
        """This lookup refitted as if the blocks ``shape_keys`` had never been measured.

        Every layer is rebuilt from the remaining rows (curve, rectangles, same-row
        curves), so an answer at a left-out shape takes the path ``predict`` would
        take without it: what ``benchdb validate`` checks.  Not stored; the
        interpolation column is not computed (NaN), as it needs a leave-one-out of
        its own."""
        rows = tuple(r for r in self.selection.rows if str(r["shape_key"]) not in shape_keys)
        removed = [r for r in self.selection.rows if str(r["shape_key"]) in shape_keys]
        curve = build_curve(
            rows, self.basis.work_per_point, self.basis.geometry, self.held_out_points
        )
        lookup = bare_lookup(replace(self.selection, rows=rows), self.basis, curve, self.method)
        own = self.same_rows.without(removed) if self.same_rows is not None else None
        return replace(lookup, row_curves=own, held_out_points=self.held_out_points)

    def describe(self) -> dict[str, Any]:
        """What the answers rest on (for --json and reports)."""
        sel = self.selection
        return {
            "kernel": sel.kernel,
            **sel.machine.scope.to_dict(),
            "environment_id": sel.environment_id,
            "threads": sel.threads,
            "precision": sel.precision,
            "context": sel.context,
            "method": self.method.name,
            "rate_unit": self.basis.unit,
            "model_id": self.model_id,
            "refit": not self.reused,
            "fit_rms_rel": self.params["fit_rms_rel"],
            "invalid_excluded": sel.invalid,
            "measured_range_bytes": [
                float(self.curve.footprint[0]),
                float(self.curve.footprint[-1]),
            ],
            "points": self.curve.points_table(),
            "params": {
                k: v for k, v in self.params.items() if k not in ("breaks", "coefs", "loo_rel")
            },
            "rectangles": [
                {"shape": s, "footprint_bytes": float(f), "log_aspect": float(a), "rate": float(r)}
                for s, f, a, r in zip(
                    self.curve.rectangles.shapes,
                    self.curve.rectangles.footprint,
                    self.curve.rectangles.log_aspect,
                    self.curve.rectangles.rate,
                    strict=True,
                )
            ],
        }


def bare_lookup(selection: Selection, basis: RateBasis, curve: Curve, method: Method) -> Lookup:
    """``method`` fitted to ``curve`` now, not stored, without the leave-one-out
    column (``interpolation_rel`` NaN): what validation refits many times."""
    params = {**fit_method(method, curve), "loo_rel": [None] * len(curve)}
    return Lookup(selection, basis, curve, method, params)


def fit_method(method: Method, curve: Curve) -> dict[str, Any]:
    """``method``'s fit of the square curve, with the row-length correction under
    ``"aspect"`` fitted to the curve's rectangles against that fit."""
    params = method.fit(curve.log_x, curve.rate)
    rect = curve.rectangles
    if not len(rect):
        return {**params, "aspect": {}}
    u = np.log(rect.footprint)
    log_ratio = np.log(rect.rate / method.evaluate(params, u))
    return {**params, "aspect": aspect.fit(u, rect.log_aspect, log_ratio)}


def method_rates(
    method: Method, params: dict[str, Any], log_footprint: np.ndarray, log_aspect: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Rates at (log footprint, log aspect) and whether the aspect was extrapolated."""
    factor, beyond = aspect.evaluate(params["aspect"], log_footprint, log_aspect)
    return method.evaluate(params, log_footprint) * factor, beyond


def leave_one_out(method: Method, curve: Curve) -> np.ndarray:
    """Per point of ``curve``: ``method`` refitted without it, its relative error in
    time there, ``T_pred / T_meas - 1 = P_meas / P_pred - 1`` (Extra-P's and paper
    003 Fig. 4's cross-validation).  NaN at the two ends (that would test
    extrapolation) and where too few points would remain."""
    out = np.full(len(curve), np.nan)
    for i in range(1, len(curve) - 1):
        rest = curve.drop(i)
        if len(rest) < method.min_points:
            continue
        params = method.fit(rest.log_x, rest.rate)
        out[i] = curve.rate[i] / method.evaluate(params, curve.log_x[i : i + 1])[0] - 1.0
    return out


def _interval_interpolation(loo_rel: list[float | None]) -> np.ndarray:
    """Per interval (n+1, as :func:`_interval_flags`), the smaller |leave-one-out
    error| of its bracketing points that have one (see the module docstring)."""
    loo = np.abs(np.array([np.nan if v is None else v for v in loo_rel], dtype=float))
    n = len(loo)
    out = np.full(n + 1, np.nan)
    for idx in range(n + 1):
        known = [loo[i] for i in {max(idx - 1, 0), min(idx, n - 1)} if np.isfinite(loo[i])]
        if known:
            out[idx] = min(known)
    return out


def _interval_flags(curve: Curve) -> np.ndarray:
    """Flags of the bracketing points of each of the n+1 intervals, as one string each."""
    n = len(curve)
    out = []
    for idx in range(n + 1):
        names = sorted({f for i in {max(idx - 1, 0), min(idx, n - 1)} for f in curve.flags[i]})
        out.append(",".join(names))
    return np.asarray(out, dtype=object)


def fit_lookup(
    db: Database,
    selection: Selection,
    method: Method,
    basis: RateBasis,
    *,
    store: bool = True,
) -> Lookup:
    """Build the curve of ``selection`` and fit ``method`` (reusing a stored fit);
    ``basis`` is the kernel's, made the selection's version's where that differs."""
    basis = basis.of_version(selection.kernel_version, db)
    curve = build_curve(selection.rows, basis.work_per_point, basis.geometry)
    if len(curve) < method.min_points:
        raise UserError(
            f"method {method.name} needs at least {method.min_points} measured footprints; "
            f"{selection.kernel} has {len(curve)} on {selection.machine.scope.label}; collect more "
            "sizes or use --method linear (needs 2)"
        )

    def fit() -> dict[str, Any]:
        loo = leave_one_out(method, curve)
        loo_rel = [None if np.isnan(e) else float(e) for e in loo]  # JSON has no NaN
        return {**fit_method(method, curve), "loo_rel": loo_rel}

    if not store:
        return Lookup(selection, basis, curve, method, fit())
    params, model_id, reused = cached_fit(
        db,
        kind=f"predictor.{method.name}",
        subject=selection.subject,
        scope=selection.machine.scope,
        environment_id=selection.environment_id,
        data=curve.fingerprint_data(),
        selector=selection.selector(),
        fit=fit,
    )
    return Lookup(selection, basis, curve, method, params, model_id, reused)


def prepare_lookup(
    db: Database,
    kernel: str,
    *,
    method: str,
    threads: int = 1,
    precision: str = "float64",
    machine: str | None = None,
    host: str | None = None,
    environment_id: int | None = None,
    context: str | None = None,
    basis: RateBasis | None = None,
    store: bool = True,
) -> Lookup:
    """Everything up to evaluation: check inputs, select the data, fit or reuse.

    ``basis``, the kernel's :func:`rate_basis` at ``precision`` where the caller has
    it already, is not read again.  The fit is stored for reuse unless ``store`` is
    False or the database is read-only.
    """
    if basis is None:  # unknown kernel/precision: fail before fitting
        basis = rate_basis(kernel, precision, db)
    chosen = METHODS.get(method)
    mc = resolve_machine_caches(db, machine, host)
    selection = read_selection(
        db,
        mc,
        kernel,
        threads=threads,
        precision=precision,
        environment_id=environment_id,
        context=context,
    )
    return fit_lookup(db, selection, chosen, basis, store=store and not db.read_only)
