"""A user's program as an application of the whole-run model, from its spec's ``[parallel]``.

The spec (docs/programs.md) declares what a whole run does: the extents split
over the ranks, the loops of one step, the halo exchanges and reductions, the
launch line (:mod:`benchdb.kernels.parallel_spec`).  Here that becomes an
:class:`~.application.Application` whose loops are the program's own swept
kernels (``<name>.<loop>``, looked up at the local block's shape as paper 003
eq. 8-9 looks up any loop), and a run of it an :class:`~.model.AppCase`
checked against what the program can run.  Pure Python: the prediction path
imports it, and nothing here builds or runs the program.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import UserError
from ..kernels.api import KernelError
from ..kernels.parallel_spec import ParallelSpec
from ..kernels.spec import ProgramSpec, load_spec
from .application import Application
from .context import PROGRAM
from .decomposition import check_decomposition
from .model import AppCase


def load_program(path: str | Path) -> ProgramSpec:
    """The spec at ``path``, which must have a ``[parallel]`` section; UserError otherwise."""
    try:
        spec = load_spec(path)
    except KernelError as exc:
        raise UserError(str(exc)) from None
    parallel_of(spec)
    return spec


def parallel_of(spec: ProgramSpec) -> ParallelSpec:
    """The spec's ``[parallel]`` section; UserError if it has none."""
    if spec.parallel is None:
        raise UserError(
            f"spec {spec.path} has no [parallel] section; add one saying how a whole run goes "
            "(docs/programs.md, 'Whole runs of your own program')"
        )
    return spec.parallel


def program_application(spec: ProgramSpec) -> Application:
    """The whole-run model's view of the program: its kernels, exchanges and reductions."""
    par = parallel_of(spec)
    return Application(
        name=spec.name,
        step_kernels=tuple(f"{spec.name}.{loop}" for loop in par.step),
        serial_kernels=tuple(f"{spec.name}.{loop}" for loop in par.serial),
        halo=par.halo,
        reduction_count=par.reductions.count,
        reduction_bytes=par.reductions.bytes,
        curves=PROGRAM,
        calibrate=f"benchdb app calibrate --program {spec.path}",
        calibrated="exchanges" in par.reports,
        geometry=spec.layout.geometry(),
    )


def program_case(spec: ProgramSpec, case: AppCase) -> AppCase:
    """``case`` with the spec's reduction interval, if the program can run it; UserError
    naming the fix for a decomposition that does not divide the grid, that splits an
    extent the spec does not split, whose blocks are below ``min_extent``, or a
    precision the program does not run."""
    par = parallel_of(spec)
    if case.diag_every:
        raise UserError(
            "--diag-every does not apply to --program: the spec's [parallel.reductions] "
            "declares the program's reductions; leave it out"
        )
    check_decomposition(case.grid, case.decomp)
    extents = spec.layout.extents
    for extent, ranks, flag in zip(
        extents, (case.decomp.px, case.decomp.py), ("px", "py"), strict=True
    ):
        if ranks > 1 and extent not in par.split:
            raise UserError(
                f"program {spec.name} does not split {extent} ([parallel] split = "
                f"{list(par.split)}); use {flag} = 1 in --decomp"
            )
    small = min(case.local)
    if small < spec.layout.min_extent:
        raise UserError(
            f"the blocks of {case.decomp.key} are {case.local[0]}x{case.local[1]}, below the "
            f"program's min_extent {spec.layout.min_extent}; use fewer ranks or a larger --grid"
        )
    if case.precision not in spec.precisions:
        raise UserError(
            f"program {spec.name} runs {', '.join(spec.precisions)}, not {case.precision}; "
            "pass --precision accordingly"
        )
    every = par.reductions.every if par.reductions.count else 0
    return AppCase(case.grid, case.decomp, case.steps, case.precision, every)
