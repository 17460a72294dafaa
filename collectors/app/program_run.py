"""One whole parallel run of a user's program: checked, launched, then stored as an ``app_run``.

The measured side of the whole-run model for a user's program (paper 001
section 4 validates its model against real runs; so does benchdb): the
program is built with its spec's build command, started with the spec's
``[parallel] launch`` line on P ranks, and its ``BENCHDB rank`` lines (the
line protocol, :func:`benchdb.kernels.protocol.parse_run_output`) give every
rank's wall time of the timed steps and, where the program reports them, its
time in loops and in exchanges.  Stored like the built-in model's runs
(``app run``), with the program's name as ``application``, so ``app runs`` and
comparisons read both alike.  The database is not touched (not even
created) before the run has succeeded: a launcher that is not found, a rank that dies, a timeout or
output that breaks the protocol is one :class:`~benchdb.errors.UserError`.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from benchdb.app.decomposition import check_decomposition
from benchdb.app.program_app import parallel_of, program_case
from benchdb.db.app_runs import store_app_runs
from benchdb.db.engine import Database
from benchdb.db.runstate import RunKind
from benchdb.errors import UserError
from benchdb.machine import detect_machine

from ...kernels.api import KernelError, PointFailure
from ...kernels.program import build, run_command, source_hash, tools_env
from ...kernels.protocol import ProtocolError, RunOutput, parse_run_output
from ...kernels.spec import ProgramSpec
from .collect import AppRunRequest, RanksReport, app_run_values


def resolve_launcher(name: str, workdir: Path) -> str:
    """The launch line's first word as a path: relative to the workdir if it has a slash,
    else beside this Python (the MPICH wheel's mpiexec) or on PATH; UserError if none."""
    if "/" in name:
        path = (workdir / name).resolve()
        if path.is_file():
            return str(path)
    else:
        found = shutil.which(name, path=tools_env()["PATH"])
        if found is not None:
            return found
    raise UserError(
        f"launcher {name!r} of [parallel] launch not found (beside this Python, on PATH or in "
        f"{workdir}); install it (pip install mpich for mpiexec) or give its path"
    )


def launch_argv(spec: ProgramSpec, req: AppRunRequest) -> list[str]:
    """The spec's launch line for ``req``, placeholders filled, its launcher found."""
    values = {
        **spec.layout.named(req.grid),
        "ranks": req.decomp.ranks,
        "px": req.decomp.px,
        "py": req.decomp.py,
        "steps": req.steps,
        "precision": req.precision,
        "binary": spec.binary or "",
    }
    argv = [arg.format(**values) for arg in parallel_of(spec).launch]
    return [resolve_launcher(argv[0], spec.workdir), *argv[1:]]


def _parts(output: RunOutput, part: str) -> list[dict[str, float]]:
    return [{part: p[part]} if part in p else {} for p in output.parts]


def _values(
    spec: ProgramSpec, req: AppRunRequest, out: RunOutput, argv: list[str]
) -> dict[str, Any]:
    reported = RanksReport(
        [p["total"] for p in out.parts], _parts(out, "loops"), _parts(out, "exchanges")
    )
    return app_run_values(
        spec.name,
        req,
        reported,
        energy={"source": "none", "reason": "a program's runs are not metered"},
        checksum=out.checksum,
        info={
            "local_shape": list(req.local),
            "program": str(spec.path),
            "source_hash": source_hash(spec),
            "launch": argv,
            "cpu_seconds": [p.get("cpu") for p in out.parts],
        },
    )


@dataclass(frozen=True)
class ProgramRun:
    """A checked whole run of a program: the spec, the case and its launch line."""

    spec: ProgramSpec
    req: AppRunRequest
    argv: list[str]


def plan_program_run(spec: ProgramSpec, req: AppRunRequest) -> ProgramRun:
    """Every check that runs nothing (UserError naming the fix): the decomposition
    against the grid, the spec and the cores, the steps, the launcher."""
    req = replace(req, diag_every=program_case(spec, req).diag_every)
    check_decomposition(req.grid, req.decomp, req.max_ranks or detect_machine().cores)
    req.check()
    return ProgramRun(spec, req, launch_argv(spec, req))


def execute_program_run(run: ProgramRun) -> RunOutput:
    """Build and launch the program; what its ranks reported.  UserError if the build
    fails, a rank dies, the run times out, fails its check or breaks the protocol."""
    spec, req, par = run.spec, run.req, parallel_of(run.spec)
    where = f"the run of {spec.name} on {req.decomp.key}"
    timeout = req.timeout if req.timeout is not None else par.timeout
    try:
        build(spec)
        stdout = run_command(run.argv, spec.workdir, tools_env(OMP_NUM_THREADS="1"), timeout).stdout
        output = parse_run_output(stdout, req.decomp.ranks, par.reports)
    except PointFailure as exc:
        raise UserError(f"{where} failed: {exc.reason}; nothing was written") from None
    except (KernelError, ProtocolError) as exc:
        raise UserError(f"{where} failed: {exc}; nothing was written") from None
    if output.check_failed is not None:
        raise UserError(f"{where} failed its own check: {output.check_failed}; nothing was written")
    return output


def store_program_run(db: Database, run: ProgramRun, output: RunOutput) -> int:
    """One ``run`` row and the run's ``app_run`` row; the ``app_run`` id."""
    req = run.req
    config = {
        "program": str(run.spec.path),
        "grid": list(req.grid),
        "decomposition": req.decomp.key,
        "steps": req.steps,
        "precision": req.precision,
        "launch": run.argv,
    }
    (stored,) = store_program_runs(
        db, [(run, output)], kind=RunKind.APP, tags=req.tags, config=config
    )
    return stored


def store_program_runs(
    db: Database,
    done: list[tuple[ProgramRun, RunOutput]],
    *,
    kind: RunKind,
    tags: tuple[str, ...],
    config: dict[str, Any],
) -> list[int]:
    """One ``run`` row holding an ``app_run`` row for each of the runs ``done``, in one
    transaction; the ``app_run`` ids."""

    runs = [_values(r.spec, r.req, out, r.argv) for r, out in done]
    return store_app_runs(db, runs, kind=kind, tags=tags, config=config)
