"""The option groups ``app predict``, ``app run`` and ``scenario`` share.

:class:`Target` is the application they serve: the built-in shallow-water
model or, with ``--program``, a user's program described by its spec.

:class:`CaseOptions` (grid, steps, precision, reductions) describe the run;
:class:`WhatIf` the model inputs ``app predict`` and ``scenario`` evaluate
the application model (paper 001 eq. 1-5) under: data selection, what-if
scalings of compute rate, bandwidth and latency or another machine's
communication parameters (paper 001 section 5), and the power model (paper
000 section 5).  :func:`.option_groups.option_group` puts a group's fields on
a typer command's command line once and hands them to the command as one object.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..app.application import Application
from ..app.decomposition import Decomposition
from ..app.energy import PowerModel
from ..app.inputs import comm_params, power_model
from ..app.model import AppCase, ModelOptions, Scaling
from ..app.program_app import load_program, program_application, program_case
from ..app.shallow_app import SHALLOW_APP
from ..comm.params import CommParams
from ..errors import UserError
from ..shapes import parse_shape
from .common import HostOption, MachineOption, finite, input_file

if TYPE_CHECKING:
    from ..db.engine import Database
    from ..kernels.spec import ProgramSpec

GridOption = Annotated[str, typer.Option("--grid", help="Global grid MxN, e.g. 1024x1024.")]
StepsOption = Annotated[int, typer.Option("--steps", help="Timed time steps.")]
PrecisionOption = Annotated[str, typer.Option("--precision", help="float64 or float32.")]
DiagOption = Annotated[
    int, typer.Option("--diag-every", help="A global mass allreduce every K steps (0: none).")
]

ProgramOption = Annotated[
    str | None,
    typer.Option(
        "--program",
        callback=input_file("--program"),
        help="A user's program: its spec file with a [parallel] section (docs/programs.md). "
        "Default: benchdb's built-in shallow-water model.",
    ),
]

MachineFileOption = Annotated[
    str | None,
    typer.Option(
        "--machine-file",
        callback=input_file("--machine-file"),
        help="Communication parameters of another machine: a JSON/TOML file or a bundled "
        "name (summit, bluegene_l, ...). Default: this machine's fitted models.",
    ),
]
MethodOption = Annotated[
    str | None, typer.Option("--method", help="Lookup interpolation (default: predictor's).")
]
OverlapOption = Annotated[
    bool, typer.Option("--overlap", help="Assume exchanges overlap computation.")
]
SingleOption = Annotated[
    bool,
    typer.Option(
        "--single-process-curves",
        help="Use loop curves measured with one process per node, even for several.",
    ),
]
RpnOption = Annotated[
    int | None, typer.Option("--ranks-per-node", help="Ranks per node (default: all on one).")
]
HaloModelOption = Annotated[
    bool,
    typer.Option(
        "--halo-model",
        help="Price exchanges with the halo model even where `app calibrate` measured them, "
        "and leave a program's loops as its curves say (always so with --machine-file or a "
        "bandwidth/latency scaling).",
    ),
]
ScaleCompute = Annotated[
    float, typer.Option("--scale-compute", callback=finite, help="What-if: x compute rate.")
]
ScaleBandwidth = Annotated[
    float, typer.Option("--scale-bandwidth", callback=finite, help="What-if: x network bandwidth.")
]
ScaleLatency = Annotated[
    float, typer.Option("--scale-latency", callback=finite, help="What-if: x latency.")
]
PowerFileOption = Annotated[
    Path | None,
    typer.Option(
        "--power-file",
        callback=input_file("--power-file"),
        help='JSON power parameters, e.g. {"core_busy_w": 12}.',
    ),
]
CoreBusyW = Annotated[
    float | None, typer.Option("--core-busy-w", callback=finite, help="W per busy core.")
]
CoreIdleW = Annotated[
    float | None, typer.Option("--core-idle-w", callback=finite, help="W per idle core.")
]
PkgIdleW = Annotated[
    float | None, typer.Option("--package-idle-w", callback=finite, help="W per idle package.")
]
DramW = Annotated[
    float | None, typer.Option("--dram-w", callback=finite, help="W of DRAM per node.")
]


@dataclass(frozen=True)
class CaseOptions:
    """The run described on the command line: global grid, steps, precision, reductions."""

    grid: GridOption
    steps: StepsOption = 100
    precision: PrecisionOption = "float64"
    diag_every: DiagOption = 0

    @property
    def shape(self) -> tuple[int, int]:
        return parse_shape(self.grid, 2)

    def app_case(self, decomp: Decomposition, cls: type[AppCase] = AppCase, **extra: Any) -> Any:
        """``cls`` (an :class:`AppCase`, or a subclass given its ``extra`` fields) of this run."""
        return cls(self.shape, decomp, self.steps, self.precision, self.diag_every, **extra)


@dataclass(frozen=True)
class Target:
    """The application a command predicts or runs: the built-in model, or ``--program``'s."""

    app: Application
    spec: ProgramSpec | None

    @classmethod
    def of(cls, program: str | None) -> Target:
        """The built-in model, or the program whose spec ``program`` names (UserError if
        the spec is bad or has no ``[parallel]`` section)."""
        if program is None:
            return cls(SHALLOW_APP, None)
        spec = load_program(program)
        return cls(program_application(spec), spec)

    def case(self, case: AppCase) -> AppCase:
        """``case``, checked against the program where there is one."""
        return case if self.spec is None else program_case(self.spec, case)

    def runnable(self, cases: list[AppCase]) -> list[AppCase]:
        """Those of ``cases`` the program can run (a scenario leaves out a decomposition
        that splits an extent the spec does not split); UserError, the first case's, if
        it can run none."""
        kept, first = [], None
        for case in cases:
            try:
                kept.append(self.case(case))
            except UserError as exc:
                first = first or exc
        if first is not None and not kept:
            raise first
        return kept


@dataclass(frozen=True)
class WhatIf:
    """The shared options as given; each method turns some into a model input."""

    machine_file: MachineFileOption = None
    machine: MachineOption = None
    host: HostOption = None
    method: MethodOption = None
    overlap: OverlapOption = False
    single_process_curves: SingleOption = False
    ranks_per_node: RpnOption = None
    halo_model: HaloModelOption = False
    scale_compute: ScaleCompute = 1.0
    scale_bandwidth: ScaleBandwidth = 1.0
    scale_latency: ScaleLatency = 1.0
    power_file: PowerFileOption = None
    core_busy_w: CoreBusyW = None
    core_idle_w: CoreIdleW = None
    package_idle_w: PkgIdleW = None
    dram_w: DramW = None

    def model_options(self) -> ModelOptions:
        return ModelOptions(
            method=self.method,
            machine=self.machine,
            host=self.host,
            populated=not self.single_process_curves,
            overlap=self.overlap,
            ranks_per_node=self.ranks_per_node,
            scaling=Scaling(self.scale_compute, self.scale_bandwidth, self.scale_latency),
            measured_exchanges=not self.halo_model,
            other_machine=bool(self.machine_file),
        )

    def power(self) -> PowerModel | None:
        """The power model; UserError on a bad file or missing --core-busy-w (no DB needed)."""
        return power_model(
            self.power_file, self.core_busy_w, self.core_idle_w, self.package_idle_w, self.dram_w
        )

    def comm(self, db: Database, *, needed: bool) -> CommParams | None:
        return comm_params(db, self.machine_file, self.machine, self.host, needed=needed)

    def cores(self, db: Database) -> int:
        """Cores of the node class whose loop data is used (energy of idle cores)."""
        from ..db.scope import resolve_scope

        with db.reading() as s:
            return resolve_scope(s, self.machine, self.host).cores
