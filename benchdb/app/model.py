"""The whole-application model: predicted time of a distributed run of an application.

docs/design.md "Whole application", after Kerbyson & Jones (paper 001 eq. 1-5):

    T_rank = sum_loops N_itr * T_loop(local footprint)
             + N_exchanges * T_halo(local edges) + N_reductions * T_allreduce
             + N_itr * T_untimed(local footprint)

and the slowest rank sets the run time.  The last term is not in paper 001: it
is the running model's time between its loop and exchange timers (the calls
between them and the clock reads), measured in the same calibration runs as the
exchanges (:mod:`.exchange_table`).  A single rank has no calibration runs and
leaves it out (docs/findings/app-exchanges.md has its size in both cases).
``T_loop`` comes from the footprint
lookup (paper 003 eq. 8-9, :func:`benchdb.predict.predict`) at the rank's
*local* block; ``T_halo`` from the exchanges measured in the running model where
``benchdb app calibrate`` timed this decomposition (:mod:`.exchange_table`:
packing, evicted buffers and the wait for a neighbour are part of an
exchange; those runs put all ranks on one node, so a run with fewer ranks a node
has its messages cross nodes and is not priced by them), else from the halo model
(:func:`benchdb.comm.halo_model.predict_halo2d`,
paper 001 eq. 8 and 10: X then Y phase, message size from the local edge x
halo width x one field x element size).  The shallow model's halos are one-sided
shifts (one message per phase and rank, see :mod:`.shallow_app`; ``shift=True``), so the
contention factor defaults to 1.  A single rank has no exchanges: it runs the
application's serial halo updates instead (the shallow model's ``shallow.boundary``).
A user's program on more than one rank has its ``T_loop`` multiplied by what its own
calibration runs measured its loops to take over its curves at their blocks
(:mod:`.in_run_loops`): its curves come from its sweep mode, where no exchange runs
between two loops.

The application (:class:`.application.Application`) says which loops a step
runs, which fields it exchanges and what it reduces: benchdb's built-in
shallow-water model (:data:`.shallow_app.SHALLOW_APP`, the default) or a user's
program described by its spec's ``[parallel]`` section (:mod:`.program_app`).

Options: ``overlap`` (communication hidden behind computation,
``max(T_comp, T_comm)`` instead of their sum); the curves of a *populated*
node (paper 001 section 4 keeps separate per-cell curves for one and for four
processes per node: memory bandwidth and the last-level cache are shared, so
a rank computes more slowly when its neighbours on the node are busy);
what-if scalings of compute rate, bandwidth and latency (paper 001 section 5);
a bandwidth or latency scaling, or another machine's description, prices the
exchanges with the halo model (measured exchanges cannot be rescaled).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import TYPE_CHECKING, Any

from ..comm.halo_model import predict_halo2d
from ..comm.params import CommParams
from ..comm.postal import PiecewisePostal
from ..errors import UserError
from .application import Application
from .context import PROGRAM, LoopContext
from .decomposition import Decomposition
from .exchange_table import MeasuredExchanges, measured_exchanges
from .in_run_loops import InRunLoops, calibrated_loops, in_run_loops
from .shallow_app import SHALLOW_APP

if TYPE_CHECKING:
    from ..db.engine import Database


@dataclass(frozen=True)
class Scaling:
    """What-if factors: rates multiply (2 = twice as fast); latency multiplies alpha."""

    compute: float = 1.0
    bandwidth: float = 1.0
    latency: float = 1.0

    def __post_init__(self) -> None:
        for name in ("compute", "bandwidth", "latency"):
            if not getattr(self, name) > 0:
                raise UserError(f"--scale-{name} must be positive, got {getattr(self, name)}")

    def apply(self, params: CommParams) -> CommParams:
        """The communication parameters with alpha x latency and bandwidths x bandwidth."""
        if (self.bandwidth, self.latency) == (1.0, 1.0):
            return params
        lat, bw = self.latency, self.bandwidth
        postal = {
            p: PiecewisePostal(
                tuple(replace(r, alpha=r.alpha * lat, beta=r.beta / bw) for r in pw.regimes)
            )
            for p, pw in params.postal.items()
        }
        maxrate = {
            p: tuple(
                replace(
                    r,
                    alpha=r.alpha * lat,
                    beta=None if r.beta is None else r.beta / bw,
                    r_cb=None if r.r_cb is None else r.r_cb * bw,
                    r_ci=None if r.r_ci is None else r.r_ci * bw,
                )
                for r in regs
            )
            for p, regs in params.maxrate.items()
        }
        return replace(params, postal=postal, maxrate=maxrate, name=f"{params.name} (scaled)")


@dataclass(frozen=True)
class ModelOptions:
    """How to predict: data selection, overlap, populated node, what-if scaling."""

    method: str | None = None
    machine: str | None = None
    host: str | None = None
    populated: bool = True
    overlap: bool = False
    ranks_per_node: int | None = None
    scaling: Scaling = field(default_factory=Scaling)
    contention: tuple[float, float] = (1.0, 1.0)
    measured_exchanges: bool = True  # False: the halo model even where calibrated
    other_machine: bool = False  # the communication parameters describe another machine

    @property
    def uses_measured_exchanges(self) -> bool:
        """Whether exchanges that ``app calibrate`` measured on this machine may price
        the run: not where the halo model is asked for, not for another machine's
        parameters, and not under a bandwidth or latency what-if (measured exchanges
        cannot be rescaled; the halo model, paper 001 eq. 8-10, can)."""
        s = self.scaling
        return (
            self.measured_exchanges
            and not self.other_machine
            and (s.bandwidth, s.latency) == (1.0, 1.0)
        )


class ExchangeSource(Enum):
    """Where a prediction's exchange times come from."""

    MEASURED = "measured"  # app calibrate's runs of the model (:mod:`.exchange_table`)
    HALO_MODEL = "halo model"  # paper 001 eq. 8-10
    NONE = "none"  # a single rank: no exchanges, the serial halo updates


def check_steps(steps: int, diag_every: int) -> None:
    """UserError unless ``steps >= 1`` and ``diag_every >= 0`` (0: no reductions)."""
    if steps < 1:
        raise UserError(f"--steps must be at least 1, got {steps}")
    if diag_every < 0:
        raise UserError(f"--diag-every must be 0 (none) or positive, got {diag_every}")


@dataclass(frozen=True)
class AppCase:
    """One scenario: global grid, decomposition, timed steps, precision, reductions."""

    grid: tuple[int, int]
    decomp: Decomposition
    steps: int
    precision: str = "float64"
    diag_every: int = 0

    def check(self) -> None:
        """UserError for a step count or reduction interval no run can have."""
        check_steps(self.steps, self.diag_every)

    @property
    def local(self) -> tuple[int, int]:
        return self.decomp.local_shape(self.grid)

    @property
    def reductions(self) -> int:
        return self.steps // self.diag_every if self.diag_every else 0


@dataclass
class AppPrediction:
    """Predicted seconds of one case, with the breakdown (per rank; all ranks are alike)."""

    case: AppCase
    loops: dict[str, float]
    exchanges: dict[str, float]
    reduction_s: float
    overlap: bool
    context: str  # the loop curves' timing context (:meth:`.application.Application.context`)
    extrapolated: list[str]
    comm: dict[str, Any]
    exchange_source: ExchangeSource
    loop_uncertainty: dict[str, float] = field(default_factory=dict)
    loop_interpolation: dict[str, float] = field(default_factory=dict)
    untimed_s: float = 0.0  # outside the loop and exchange timers (measured exchanges only)
    exchange_uncertainty_rel: float = 0.0  # the calibrated runs' spread (measured exchanges)
    in_run_loop_factor: float = 1.0  # a program's loops in its runs over its curves (applied)

    @property
    def compute_s(self) -> float:
        return sum(self.loops.values())

    @property
    def compute_uncertainty_s(self) -> float:
        """The loops' lookup uncertainties (``uncertainty_rel``: the spread of the curve's
        samples at the bracketing sizes), added as fully correlated: on a shared host the
        other tenants move every loop of a run together (docs/findings/app-loop-curves.md),
        so they do not average out over the loops.  Not in it: the interpolation error
        between measured sizes (:attr:`compute_interpolation_s`) and the exchanges."""
        return sum(t * self.loop_uncertainty.get(k, 0.0) for k, t in self.loops.items())

    @property
    def exchange_uncertainty_s(self) -> float:
        """The measured exchanges' spread over their calibration runs
        (:data:`benchdb.app.exchange_table.SPREAD`); zero for the halo model."""
        return self.exchange_s * self.exchange_uncertainty_rel

    @property
    def uncertainty_s(self) -> float:
        """The loops' and the exchanges' spreads, added: a host's busy spell moves both."""
        return self.compute_uncertainty_s + self.exchange_uncertainty_s

    @property
    def compute_interpolation_s(self) -> float:
        """The loops' interpolation errors (the lookup's ``interpolation_rel``: its
        leave-one-out error at the bracketing sizes), added as fully correlated: every
        loop of a block bends at the same cache edge.  A loop without an estimate (no
        interior bracketing point: extrapolated, and flagged so) adds nothing."""
        return sum(
            t * self.loop_interpolation[k]
            for k, t in self.loops.items()
            if math.isfinite(self.loop_interpolation.get(k, math.nan))
        )

    @property
    def exchange_s(self) -> float:
        return sum(self.exchanges.values())

    @property
    def total_s(self) -> float:
        comm = self.exchange_s + self.reduction_s
        timed = max(self.compute_s, comm) if self.overlap else self.compute_s + comm
        return timed + self.untimed_s

    @property
    def dominant(self) -> str:
        """The term that costs most: a loop name, ``exchanges`` or ``reductions``."""
        terms = {**self.loops, "exchanges": self.exchange_s, "reductions": self.reduction_s}
        return max(terms, key=terms.get)

    def to_dict(self) -> dict[str, Any]:
        c = self.case
        return {
            "grid": list(c.grid),
            "decomposition": c.decomp.key,
            "ranks": c.decomp.ranks,
            "local_shape": list(c.local),
            "steps": c.steps,
            "precision": c.precision,
            "total_s": self.total_s,
            "compute_s": self.compute_s,
            "compute_uncertainty_s": self.compute_uncertainty_s,
            "exchange_uncertainty_s": self.exchange_uncertainty_s,
            "uncertainty_s": self.uncertainty_s,
            "compute_interpolation_s": self.compute_interpolation_s,
            "exchange_s": self.exchange_s,
            "reduction_s": self.reduction_s,
            "untimed_s": self.untimed_s,
            "dominant": self.dominant,
            "overlap": self.overlap,
            "context": self.context,
            "loops_s": self.loops,
            "in_run_loop_factor": self.in_run_loop_factor,
            "loops_uncertainty_rel": self.loop_uncertainty,
            "loops_interpolation_rel": {
                k: v if math.isfinite(v) else None for k, v in self.loop_interpolation.items()
            },
            "exchanges_s": self.exchanges,
            "exchange_source": self.exchange_source.value,
            "extrapolated": self.extrapolated,
            "comm": self.comm,
        }


def _ranks_on_node(case: AppCase, options: ModelOptions, comm: CommParams | None) -> int:
    rpn = options.ranks_per_node or (comm.ranks_per_node if comm else None) or case.decomp.ranks
    return min(rpn, case.decomp.ranks)


@dataclass
class _Loops:
    """One case's loops as the lookup answers them, per kernel."""

    seconds: dict[str, float] = field(default_factory=dict)  # N_itr = steps
    uncertainty: dict[str, float] = field(default_factory=dict)  # relative
    interpolation: dict[str, float] = field(default_factory=dict)  # relative, NaN: none
    extrapolated: list[str] = field(default_factory=list)


def _compute(
    db: Database,
    app: Application,
    cases: Sequence[AppCase],
    contexts: Sequence[str],
    options: ModelOptions,
) -> list[_Loops]:
    """Per case, the lookup's answer for each loop.

    One predictor call per (kernel, precision, context) with every local shape
    at once: the fit is built (or read back) once.
    """
    from ..predict import DEFAULT_METHOD, predict

    out = [_Loops() for _ in cases]
    groups: dict[tuple[str, str, str], list[int]] = {}
    for i, (case, ctx) in enumerate(zip(cases, contexts, strict=True)):
        for kernel in app.kernels(case.decomp.ranks):
            groups.setdefault((kernel, case.precision, ctx), []).append(i)
    for (kernel, precision, ctx), idx in groups.items():
        try:
            frame = predict(
                db,
                kernel,
                [cases[i].local for i in idx],
                iterations=[cases[i].steps for i in idx],
                threads=1,
                method=options.method or DEFAULT_METHOD,
                precision=precision,
                machine=options.machine,
                host=options.host,
                context=ctx,
            )
        except UserError as exc:
            if ctx == app.context(1, populated=False):
                raise
            ppn = LoopContext.parse(ctx).ranks_per_node
            raise UserError(
                f"{exc}; measure the curves of a node with {ppn} busy processes with "
                f"`{app.calibrate} --ranks {ppn}`, or predict with --single-process-curves"
            ) from exc
        for i, (_, row) in zip(idx, frame.iterrows(), strict=True):
            out[i].seconds[kernel] = float(row.time_s) / options.scaling.compute
            out[i].uncertainty[kernel] = float(row.uncertainty_rel)
            out[i].interpolation[kernel] = float(row.interpolation_rel)
            if row.extrapolated:
                out[i].extrapolated.append(kernel)
    return out


def _exchanges(
    app: Application,
    case: AppCase,
    comm: CommParams,
    options: ModelOptions,
    rpn: int,
    measured: MeasuredExchanges | None,
) -> tuple[ExchangeSource, dict[str, float], float, float, dict[str, Any], bool]:
    """Where the exchanges come from, seconds per 'field.axis' over all steps, seconds
    outside the timers, the relative spread of the exchanges, the model's description,
    extrapolated?  Measured where ``app calibrate`` timed this decomposition and the
    options allow it (``measured`` is None otherwise), else the halo model."""
    if measured is not None and measured.covers(case.decomp):
        per, outside = measured.per_exchange(case.decomp, case.local)
        untimed = measured.untimed(case.decomp, case.local) * case.steps
        spread = measured.spread(case.decomp, case.local)
        exchanges = {k: v * case.steps for k, v in per.items()}
        described = measured.describe(case.decomp)
        return ExchangeSource.MEASURED, exchanges, untimed, spread, described, outside
    halo = predict_halo2d(
        options.scaling.apply(comm),
        (case.decomp.px, case.decomp.py),
        case.local,
        halo=app.halo.width,
        fields=1,
        word_bytes=app.element_bytes(case.precision),
        ranks_per_node=rpn,
        periodic=app.halo.periodic,
        contention=options.contention,
        shift=app.halo.shift,
    )
    per_axis = {p.phase: p.seconds * case.steps for p in halo.phases}
    exchanges = {f"{f}.{ax}": per_axis[ax] for f in app.halo.arrays for ax in ("x", "y")}
    described = {"model": "halo model (paper 001 eq. 8-10)", **halo.to_dict()}
    return ExchangeSource.HALO_MODEL, exchanges, 0.0, 0.0, described, False


def _calibration_runs(db: Database, app: Application, options: ModelOptions) -> list[dict]:
    """The app's stored runs on the machine predicted for, where ``app calibrate``'s runs
    may price a run (none otherwise)."""
    if not (app.calibrated and options.uses_measured_exchanges):
        return []
    from ..db.app_runs import app_runs
    from ..predict.source import resolve_machine_caches

    hosts = set(resolve_machine_caches(db, options.machine, options.host).scope.host_ids)
    return [r for r in app_runs(db, application=app.name) if r["machine_id"] in hosts]


_Placed = tuple[int, str, int]  # ranks, precision, ranks a node


def _placed(case: AppCase, rpn: int) -> _Placed:
    return case.decomp.ranks, case.precision, rpn


def _wanted(cases: Sequence[AppCase], rpns: Sequence[int]) -> set[_Placed]:
    return {_placed(c, r) for c, r in zip(cases, rpns, strict=True) if c.decomp.ranks > 1}


def _measured_tables(
    runs: Sequence[dict], app: Application, wanted: set[_Placed]
) -> dict[_Placed, MeasuredExchanges | None]:
    """The measured-exchange table per placement the cases need, if any: runs across
    nodes from calibration runs placed alike (``benchdb slurm calibrate``)."""
    if not runs:
        return {}
    return {(n, p, r): measured_exchanges(runs, n, p, app.geometry, r) for n, p, r in wanted}


def _in_run_tables(
    db: Database,
    runs: Sequence[dict],
    app: Application,
    wanted: set[_Placed],
    options: ModelOptions,
) -> dict[_Placed, InRunLoops]:
    """For a user's program, per placement the cases need: its calibration runs' loops
    against its curves at their blocks (:mod:`.in_run_loops`), the curves of as many
    busy processes a node as those runs placed.  The built-in model's curves are timed
    inside a stepping process already (``fullstep``)."""
    if not runs or app.curves != PROGRAM:
        return {}
    out = {}
    for ranks, precision, rpn in wanted:
        calibrated = calibrated_loops(runs, ranks, precision, rpn)
        if not calibrated:
            continue
        grids = [AppCase(c.grid, c.decomp, c.steps, precision) for c in calibrated]
        context = app.context(rpn, options.populated)
        unscaled = replace(options, scaling=Scaling())
        curves = _compute(db, app, grids, [context] * len(grids), unscaled)
        per_step = [
            sum(loops.seconds.values()) / grid.steps
            for loops, grid in zip(curves, grids, strict=True)
        ]
        out[(ranks, precision, rpn)] = in_run_loops(calibrated, per_step, app.geometry, precision)
    return out


def _reduction(
    app: Application, case: AppCase, comm: CommParams, options: ModelOptions, rpn: int
) -> float:
    count = app.reduction_count * case.reductions
    if not count or case.decomp.ranks == 1:
        return 0.0
    params = options.scaling.apply(comm)
    inter = case.decomp.ranks > rpn
    p2p = params.postal[params.placement_for(inter)].time
    nbytes = app.reduction_bytes
    if params.allreduce is not None:
        seconds = params.allreduce.time(case.decomp.ranks, nbytes, p2p)[0]
    else:
        from ..comm.allreduce_model import tree_time

        seconds = tree_time(case.decomp.ranks, nbytes, p2p)
    return count * seconds


def predict_app(
    db: Database,
    cases: Sequence[AppCase],
    comm: CommParams | None,
    options: ModelOptions | None = None,
    app: Application = SHALLOW_APP,
) -> list[AppPrediction]:
    """Predictions of ``app``'s runs ``cases`` (one predictor fit per kernel for all)."""
    options = options or ModelOptions()
    rpns = [_ranks_on_node(c, options, comm) for c in cases]
    contexts = [app.context(r, options.populated) for r in rpns]
    if comm is None and any(c.decomp.ranks > 1 for c in cases):
        raise UserError(
            "no communication parameters: run `benchdb comm collect` on this machine, "
            "or pass --machine-file FILE (a bundled name such as summit, or your own)"
        )
    computed = _compute(db, app, cases, contexts, options)
    runs = _calibration_runs(db, app, options)
    wanted = _wanted(cases, rpns)
    tables = _measured_tables(runs, app, wanted)
    in_run = _in_run_tables(db, runs, app, wanted, options)
    results = []
    for case, ctx, rpn, loops in zip(cases, contexts, rpns, computed, strict=True):
        extrap = loops.extrapolated
        factor = 1.0
        if case.decomp.ranks == 1:
            exchanges, described, reduction = {}, {"model": app.serial_description()}, 0.0
            untimed = spread = 0.0
            source = ExchangeSource.NONE
        else:
            # calibration runs price only runs placed as they were: `app calibrate` puts
            # all P ranks on one node, `slurm calibrate` R a node; else the halo model
            table = tables.get(_placed(case, rpn))
            source, exchanges, untimed, spread, described, outside = _exchanges(
                app, case, comm, options, rpn, table
            )
            if outside:
                extrap.append("exchanges")
            reduction = _reduction(app, case, comm, options, rpn)
            factors = in_run.get(_placed(case, rpn))
            if factors is not None:
                factor = factors.factor(case.decomp, case.local)
        pred = AppPrediction(
            case, {k: t * factor for k, t in loops.seconds.items()}, exchanges, reduction,
            options.overlap, ctx, extrap, described, source,
            loop_uncertainty=loops.uncertainty, loop_interpolation=loops.interpolation,
            untimed_s=untimed, exchange_uncertainty_rel=spread, in_run_loop_factor=factor,
        )  # fmt: skip
        results.append(pred)
    return results
