"""Exchange calibration of a user's program: its own halo exchanges timed in its own runs.

What :mod:`.exchanges` does for the built-in model, done for a program whose
spec's ``[parallel] reports`` lists ``exchanges``: the halo model (paper 001
eq. 8-10) prices the messages alone, while inside the running program an
exchange also packs, copies and waits for the neighbour.  So ``benchdb app
calibrate --program`` runs the program itself with its launch line, for every
decomposition of P ranks, on square global grids whose per-rank footprints run
one octave apart from 3/4 of L1 up to 8x the last-level cache (those whose run
fits in memory), in :data:`.exchanges.PASSES` passes (the second in reverse
order), and stores them as app runs tagged
:data:`benchdb.app.exchange_table.CALIBRATION_TAG`.  The whole-run model then
looks the program's exchanges up by local footprint
(:mod:`benchdb.app.exchange_table`), as it does the built-in model's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from benchdb.app.exchange_table import CALIBRATION_TAG, placement_tag
from benchdb.app.model import AppCase
from benchdb.app.program_app import program_case
from benchdb.db.engine import Database
from benchdb.db.runstate import RunKind
from benchdb.errors import UserError
from benchdb.machine import MachineInfo, available_memory_bytes

from ...kernels.protocol import RunOutput
from ...kernels.spec import ProgramSpec
from .collect import AppRunRequest
from .exchanges import PASSES, calibration_cases
from .program_run import ProgramRun, execute_program_run, plan_program_run, store_program_runs

SIDE = 1024  # the square whose footprint gives the program's bytes per grid point


def program_calibration_cases(
    spec: ProgramSpec, machine: MachineInfo, ranks: int, precision: str
) -> list[AppCase]:
    """The cases to calibrate (:func:`.exchanges.calibration_cases` with the program's
    footprint and smallest block) that the program runs and memory holds (the global
    grid three times: the ranks' blocks, a global copy to slice them from or gather
    into, and room for the message buffers)."""
    geometry = spec.layout.geometry()
    per_point = geometry.footprint_bytes((SIDE,) * 2, precision) / SIDE**2
    cases = calibration_cases(
        machine, ranks, precision, bytes_per_point=per_point, min_extent=spec.layout.min_extent
    )
    free = available_memory_bytes()
    fits = [c for c in cases if not free or 3 * geometry.footprint_bytes(c.grid, precision) < free]
    return [program_case(spec, c) for c in fits]


def require_reported_exchanges(spec: ProgramSpec) -> None:
    """UserError where the program's ranks report no time in exchanges: there is nothing to
    time across nodes (``benchdb slurm calibrate``, ``app calibrate --ranks-per-node``)."""
    if "exchanges" not in (spec.parallel.reports if spec.parallel else ()):
        raise UserError(
            f"program {spec.name} reports no time in exchanges ([parallel] reports): there "
            "is nothing to time across nodes; its exchanges stay with the halo model"
        )


def calibrate_program_exchanges(
    db: Database,
    spec: ProgramSpec,
    cases: Sequence[AppCase],
    *,
    progress: Callable[[str], None] | None = None,
    tags: Sequence[str] = (),
    ranks_per_node: int | None = None,
) -> int:
    """Run ``cases`` :data:`.exchanges.PASSES` times with the program's launch line and
    store them in one run; the number of app runs stored.  Nothing is stored unless
    every run succeeds (UserError naming the one that failed).  ``ranks_per_node``: how
    the launch line places the ranks (default: all on this node), tagged on the runs."""
    if not cases:
        raise UserError("no exchange calibration grid fits this machine's caches and memory")
    if "exchanges" not in (spec.parallel.reports if spec.parallel else ()):
        raise UserError(
            f"program {spec.name} reports no time in exchanges ([parallel] reports); "
            "its exchanges stay with the halo model"
        )
    ranks = cases[0].decomp.ranks
    order = [c for p in range(PASSES) for c in (cases if p % 2 == 0 else cases[::-1])]
    all_tags = (CALIBRATION_TAG, placement_tag(ranks_per_node or ranks), *tags)
    done: list[tuple[ProgramRun, RunOutput]] = []
    for i, case in enumerate(order, start=1):
        if progress:
            progress(f"exchange calibration {i}/{len(order)}: {case.grid[0]}x{case.grid[1]} "
                     f"on {case.decomp.key}")  # fmt: skip
        req = AppRunRequest(
            case.grid, case.decomp, case.steps, case.precision, case.diag_every, tags=all_tags
        )
        planned = plan_program_run(spec, req)
        done.append((planned, execute_program_run(planned)))
    config = {"program": str(spec.path), "ranks": ranks, "passes": PASSES,
              "ranks_per_node": ranks_per_node or ranks}  # fmt: skip
    return len(
        store_program_runs(db, done, kind=RunKind.APP_CALIBRATE, tags=all_tags, config=config)
    )
