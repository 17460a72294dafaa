"""The options of a communication benchmark job, shared by ``comm collect`` (mpiexec here)
and ``slurm comm`` (srun across nodes), and their translation into the arguments of
``python -m benchdb.collectors.mpi``.

Checked before anything starts: a bad option is one line, exit 2, nothing run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated

import typer

from ..errors import UserError
from ..machine import parse_size
from .common import finite

BenchmarksOption = Annotated[
    str,
    typer.Option(
        help="Comma-separated: pingpong, exchange (MPI_Sendrecv), pairs, halo2d, allreduce."
    ),
]
MaxBytesOption = Annotated[str, typer.Option(help="Largest ping-pong message.")]
SizesOption = Annotated[
    str | None, typer.Option("--sizes", help="Explicit ping-pong sizes, e.g. 8,1024.")
]
DecompOption = Annotated[str | None, typer.Option(help="Halo grid PXxPY (default: balanced).")]
HaloLocalOption = Annotated[str, typer.Option(help="Halo block edges n (n×n blocks).")]
HaloFieldsOption = Annotated[str, typer.Option(help="Fields per halo message.")]
SamplesOption = Annotated[int, typer.Option(help="Samples per point (all stored).")]
MinSampleTimeOption = Annotated[float, typer.Option(callback=finite, help="Seconds per sample.")]
QuickOption = Annotated[bool, typer.Option(help="A short sweep (up to 64 KiB, 5 samples).")]
TagOption = Annotated[list[str] | None, typer.Option(help="Tag for the run (repeatable).")]

ALL_BENCHMARKS = "pingpong,exchange,pairs,halo2d,allreduce"
DEFAULT_MAX_BYTES = "4MiB"
DEFAULT_SAMPLES = 7


def _size(text: str) -> int:
    try:
        value = parse_size(text)
    except ValueError:
        value = 0
    if value < 1:
        raise UserError(f"--max-bytes {text!r} is not a positive size; write e.g. 4MiB or 65536")
    return value


def int_list(text: str | None, option: str) -> list[int] | None:
    if text is None:
        return None
    if not re.fullmatch(r"\s*\d+(\s*,\s*\d+)*\s*", text) or 0 in [int(v) for v in text.split(",")]:
        raise UserError(f"{option} {text!r} must be positive integers separated by commas")
    return [int(v) for v in text.split(",")]


@dataclass(frozen=True)
class CommJobOptions:
    """What to measure; :meth:`module_args` checks it for ``ranks`` ranks."""

    benchmarks: str = ALL_BENCHMARKS
    max_bytes: str = DEFAULT_MAX_BYTES
    sizes: str | None = None
    decomp: str | None = None
    halo_local: str = "16,64,256,1024"
    halo_fields: str = "1,3"
    samples: int = DEFAULT_SAMPLES
    min_sample_time: float = 0.002
    quick: bool = False
    tags: tuple[str, ...] = ()

    def module_args(self, ranks: int, ranks_from: str) -> list[str]:
        """The collector module's arguments (``--db`` and ``--progress`` left to the caller);
        ``ranks_from`` names the options that set ``ranks``, for the error messages."""
        from ..collectors.mpi.job_output import BENCHMARKS

        if ranks < 2:
            raise UserError(f"{ranks_from}: the benchmarks need at least 2 ranks")
        chosen = [b.strip() for b in self.benchmarks.split(",") if b.strip()]
        unknown = sorted(set(chosen) - set(BENCHMARKS))
        if unknown or not chosen:
            raise UserError(f"unknown benchmark(s) {unknown}; choose from {','.join(BENCHMARKS)}")
        if self.samples < 1 or self.min_sample_time <= 0:
            raise UserError("--samples must be at least 1 and --min-sample-time positive")
        quick_max = self.quick and self.max_bytes == DEFAULT_MAX_BYTES
        biggest = _size("64KiB" if quick_max else self.max_bytes)
        samples = 5 if self.quick and self.samples == DEFAULT_SAMPLES else self.samples
        args = ["--benchmarks", ",".join(chosen), "--max-bytes", str(biggest)]
        args += ["--samples", str(samples), "--min-sample-time", repr(self.min_sample_time)]
        if (size_list := int_list(self.sizes, "--sizes")) is not None:
            args += ["--sizes", ",".join(map(str, size_list))]
        if self.decomp is not None:
            from ..app.decomposition import parse_decomposition

            d = parse_decomposition(self.decomp)
            if d.ranks != ranks:
                raise UserError(
                    f"--decomp {self.decomp} has {d.ranks} ranks but {ranks_from} gives {ranks}; "
                    f"choose PXxPY with PX*PY = {ranks}"
                )
            args += ["--decomp", f"{d.px},{d.py}"]
        local = int_list(self.halo_local, "--halo-local") or []
        fields = int_list(self.halo_fields, "--halo-fields") or []
        args += ["--halo-local", ",".join(map(str, local))]
        args += ["--halo-fields", ",".join(map(str, fields))]
        for t in self.tags:
            args += ["--tag", t]
        return args
