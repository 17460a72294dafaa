"""``run_app``: validate, run the distributed model under mpiexec, store one ``app_run``.

Nothing is written before the MPI job has succeeded: the run row and its
``app_run`` row go in together, in one transaction, after rank 0's result
file is complete.  Bad input raises :class:`~benchdb.errors.UserError`
before anything starts; a failed rank aborts the whole job
(:mod:`.worker`), and the error names the rank and its exception.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchdb.app.decomposition import check_decomposition
from benchdb.app.model import AppCase
from benchdb.db.app_runs import store_app_runs
from benchdb.db.engine import Database
from benchdb.db.runstate import RunKind
from benchdb.errors import UserError
from benchdb.machine import available_memory_bytes, detect_machine
from benchdb.shapes import shape_key
from benchdb.units import fmt_bytes

from ...kernels.api import DTYPE_BYTES
from ...kernels.builtin.shallow import SHALLOW
from .launch import failure_message, run_mpi

WORKER = "benchdb.collectors.app.worker"


@dataclass(frozen=True)
class AppRunRequest(AppCase):
    """The case to run, with the limits of this launch and the run's tags."""

    max_ranks: int | None = None
    timeout: float | None = None
    tags: tuple[str, ...] = ()


def validate(req: AppCase, max_ranks: int | None = None) -> None:
    """Every check that needs no MPI: UserError naming the fix."""
    machine = detect_machine()
    check_decomposition(req.grid, req.decomp, max_ranks or machine.cores)
    req.check()
    if req.precision not in DTYPE_BYTES:
        raise UserError(f"unknown precision {req.precision!r}; use {', '.join(DTYPE_BYTES)}")
    # every rank builds the global initial fields once, then keeps its block
    need = req.decomp.ranks * SHALLOW.footprint_bytes(req.grid, req.precision) * 3 // 2
    free = available_memory_bytes()
    if free and need > free:
        raise UserError(
            f"grid {shape_key(req.grid)} on {req.decomp.ranks} ranks needs about "
            f"{fmt_bytes(need)} of memory, {fmt_bytes(free)} is free; use a smaller --grid"
        )


def run_worker(ranks: int, config: dict[str, Any], timeout: float | None) -> Any:
    """Start the worker job on ``ranks`` ranks; rank 0's result (UserError if it failed)."""
    with tempfile.TemporaryDirectory(prefix="benchdb-app-") as tmp:
        out = Path(tmp) / "result.json"
        proc = run_mpi(ranks, WORKER, [json.dumps(config), str(out)], timeout=timeout)
        if proc.returncode != 0 or not out.exists():
            raise UserError(f"the MPI run failed ({failure_message(proc)}); nothing was written")
        return json.loads(out.read_text())


def execute(req: AppRunRequest, fields_out: str | None) -> dict[str, Any]:
    return run_worker(req.decomp.ranks, {**_config(req), "fields_out": fields_out}, req.timeout)


def _config(req: AppCase) -> dict[str, Any]:
    return {
        "grid": list(req.grid),
        "decomposition": [req.decomp.px, req.decomp.py],
        "steps": req.steps,
        "precision": req.precision,
        "diag_every": req.diag_every,
    }


@dataclass(frozen=True)
class RanksReport:
    """What the ranks of one whole run reported, per rank (rank order)."""

    total: list[float]  # seconds of the timed steps
    loops: list[dict[str, float]]  # seconds in the loops, by loop or part
    exchanges: list[dict[str, float]]  # seconds in the halo exchanges, by part


def app_run_values(
    application: str,
    case: AppCase,
    ranks: RanksReport,
    *,
    energy: dict[str, Any],
    checksum: float | None,
    info: dict[str, Any],
) -> dict[str, Any]:
    """The ``app_run`` columns of a run of the built-in model or of a user's program (the
    one place they are made, for :func:`benchdb.db.app_runs.store_app_runs`), its slowest
    rank's time the run's."""
    return dict(
        application=application,
        grid=list(case.grid),
        grid_key=shape_key(case.grid),
        px=case.decomp.px,
        py=case.decomp.py,
        ranks=case.decomp.ranks,
        steps=case.steps,
        precision=case.precision,
        threads=1,
        total_seconds=max(ranks.total),
        rank_seconds=ranks.total,
        loop_seconds=ranks.loops,
        exchange_seconds=ranks.exchanges,
        energy=energy,
        checksum=checksum,
        info=info,
    )


def _app_run_values(req: AppCase, result: dict[str, Any]) -> dict[str, Any]:
    ranks = result["ranks"]
    reported = RanksReport(
        [r["seconds"] for r in ranks], [r["loops"] for r in ranks], [r["exchanges"] for r in ranks]
    )
    return app_run_values(
        "shallow",
        req,
        reported,
        energy=result["energy"] or {},
        checksum=result["mass"],
        info={
            "local_shape": result["local_shape"],
            "reductions": result["reductions"],
            "reduction_seconds": [r["reduction"] for r in ranks],
            "placement": [{k: r[k] for k in ("rank", "coords", "host", "cpus")} for r in ranks],
            "first_step": "forward step before timing (untimed, also compiles)",
        },
    )


def store_model_runs(
    db: Database,
    cases: list[AppCase],
    results: list[dict[str, Any]],
    *,
    kind: RunKind,
    tags: tuple[str, ...],
    config: dict[str, Any],
) -> list[int]:
    """The built-in model's runs ``cases`` with the worker's ``results``, stored as one run
    (:func:`~benchdb.db.app_runs.store_app_runs`); their ``app_run`` ids."""
    runs = [_app_run_values(c, r) for c, r in zip(cases, results, strict=True)]
    return store_app_runs(db, runs, kind=kind, tags=tags, config=config)


def run_cases(
    db: Database,
    cases: list[AppCase],
    *,
    kind: RunKind,
    tags: tuple[str, ...],
    timeout: float | None = None,
    config: dict[str, Any] | None = None,
) -> list[int]:
    """Run ``cases`` (one rank count) one after another in ONE MPI job and store them
    as one run; their ``app_run`` ids.

    Each case is a complete run of the model, as ``benchdb app run`` makes it;
    sharing the job shares the compilation (most of a launch:
    docs/findings/app-exchanges.md), so
    dozens of short cases, or the repeats of a comparison, run within seconds
    of each other instead of minutes.
    """
    ranks = {c.decomp.ranks for c in cases}
    if len(ranks) != 1:
        raise ValueError(f"one job runs one rank count, got {sorted(ranks)}")
    for case in cases:
        validate(case)
    job = {"cases": [_config(c) for c in cases]}
    results = run_worker(ranks.pop(), job, timeout)
    return store_model_runs(
        db, cases, results, kind=kind, tags=tags, config={**(config or {}), **job}
    )


def run_app(db: Database, req: AppRunRequest, *, fields_out: str | None = None) -> int:
    """Run and store; the new ``app_run`` id."""
    validate(req, req.max_ranks)
    result = execute(req, fields_out)
    config = {**_config(req), "decomposition": req.decomp.key}
    return store_model_runs(db, [req], [result], kind=RunKind.APP, tags=req.tags, config=config)[0]
