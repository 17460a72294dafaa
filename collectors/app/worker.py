"""One rank of the distributed shallow-water run (started by ``mpiexec``; see ``collect``).

``python -m benchdb.collectors.app.worker CONFIG_JSON OUT_JSON``.  Every rank
builds its block of the original initial conditions (the global fields of
:func:`benchdb.kernels.builtin.shallow.model.initial_state`, sliced: the same numbers
as the serial model), runs the model's first, forward step untimed (it also
compiles), then ``steps`` timed leapfrog steps, compiled whole with their
halo exchanges (:mod:`.stepping`).  A single rank runs the serial model's
own boundary phases instead.

Rank 0 writes the gathered timings to OUT_JSON (atomically); each rank may
also write its final fields (``fields_out``) for the correctness test.  A
config with ``"cases"`` (a list of such configs) runs them one after another
in the same job and writes a list: the exchange calibration
(:mod:`.exchanges`) runs dozens of short cases, and a job per case would pay
the MPI start and the compilation (many seconds: docs/findings/app-exchanges.md)
each time.  Any exception on any rank prints one line and aborts the whole job,
so the parent sees a failure and writes nothing.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np
from mpi4py import MPI

from benchdb.app.decomposition import Decomposition, check_decomposition
from benchdb.app.energy import RaplReader
from benchdb.app.shallow_app import EXCHANGED_FIELDS

from ...kernels.arrays import aligned_empty
from ...kernels.builtin.shallow.model import (
    STAGGER,
    ShallowState,
    initial_state,
    mass,
    step_constants,
)
from ...kernels.builtin.shallow.step import N_PHASES, PHASES, run_steps
from ...kernels.clock import read_overhead_ticks, seconds
from ..mpi import native
from .stepping import distributed_steps


def local_state(
    grid: tuple[int, int], precision: str, origin: tuple[int, int], local: tuple[int, int]
) -> ShallowState:
    """This rank's (ml+1) x (nl+1) block of every field, halo included, Fortran order."""
    full = initial_state(grid, precision)
    (i0, j0), (ml, nl) = origin, local
    block = {}
    for name in ShallowState._fields:
        a = aligned_empty((ml + 1, nl + 1), precision, order="F")
        a[...] = getattr(full, name)[i0 : i0 + ml + 1, j0 : j0 + nl + 1]
        block[name] = a
    return ShallowState(**block)


class RankModel:
    """The state, the neighbours, the buffers and the timers of one rank."""

    def __init__(
        self,
        cart: MPI.Cartcomm,
        grid: tuple[int, int],
        decomp: Decomposition,
        precision: str,
        *,
        distributed: bool = False,
    ) -> None:
        """``distributed``: step a single rank the distributed way too (its exchanges
        become local halo copies), as :mod:`.instep` times the populated curves."""
        self.cart = cart
        self.coords = tuple(cart.Get_coords(cart.rank))
        self.local = decomp.local_shape(grid)
        self.origin = decomp.origin(grid, self.coords)
        self.state = local_state(grid, precision, self.origin, self.local)
        self.single = decomp.ranks == 1 and not distributed
        # (lower, upper) along X then Y; a rank alone along an axis is its own neighbour
        self.neighbours = np.array([*cart.Shift(0, 1), *cart.Shift(1, 1)], dtype=np.int64)
        self.offsets = np.array([STAGGER[f] for f in EXCHANGED_FIELDS], dtype=np.int64)
        row = self.local[1] + 1  # a row of an (ml+1) x (nl+1) field, packed for sending
        self.send = np.empty(row, dtype=self.state.p.dtype)
        self.recv = np.empty(row, dtype=self.state.p.dtype)
        self.handles = (cart.handle, native.datatype(self.state.p.dtype))
        self.clock_read_ticks = read_overhead_ticks()  # subtracted once per timed interval
        self.reset()

    def reset(self) -> None:
        self.ticks = np.zeros(N_PHASES, dtype=np.int64)
        self.xticks = np.zeros((len(EXCHANGED_FIELDS), 2), dtype=np.int64)
        self.reduction = 0.0

    def steps(self, c, steps: int) -> None:  # type: ignore[no-untyped-def]
        """``steps`` time steps with constants ``c``, timed per loop and per exchange."""
        if self.single:
            run_steps(False, self.state, c, steps, 0, N_PHASES, True, self.ticks)
            return
        err = distributed_steps(
            self.state, c, steps, self.ticks, self.xticks, self.offsets, self.neighbours,
            self.cart.rank, self.send, self.recv, *self.handles,
        )  # fmt: skip
        if err:
            raise RuntimeError(f"MPI error {err} in a halo exchange")

    def reduce_mass(self) -> float:
        """The global mass diagnostic: one allreduce (paper 001's global sum)."""
        local = mass(self.state)
        t0 = MPI.Wtime()
        total = self.cart.allreduce(local, op=MPI.SUM)
        self.reduction += MPI.Wtime() - t0
        return total

    def loop_seconds(self, steps: int) -> dict[str, float]:
        """Seconds per kernel name, the clock-read cost subtracted as the serial benchmark does."""
        out: dict[str, float] = {}
        overhead = self.clock_read_ticks
        for k, name in enumerate(PHASES):
            if self.single or name != "boundary":
                key = f"shallow.{name}"
                out[key] = out.get(key, 0.0) + seconds(max(self.ticks[k] - steps * overhead, 0.0))
        return out

    def exchange_seconds(self, steps: int) -> dict[str, float]:
        """Seconds per 'field.axis' exchange (zero for a single rank)."""
        overhead = self.clock_read_ticks
        return {
            f"{f}.{axis}": seconds(max(self.xticks[i, a] - steps * overhead, 0.0))
            for i, f in enumerate(EXCHANGED_FIELDS)
            for a, axis in enumerate(("x", "y"))
        }


def run_rank(comm: MPI.Comm, config: dict[str, Any]) -> dict[str, Any] | None:
    grid = tuple(config["grid"])
    decomp = check_decomposition(grid, Decomposition(*config["decomposition"]))
    steps, precision = int(config["steps"]), config["precision"]
    diag_every = int(config.get("diag_every", 0))
    if comm.size != decomp.ranks:
        raise RuntimeError(f"started with {comm.size} ranks for decomposition {decomp.key}")
    cart = comm.Create_cart([decomp.px, decomp.py], periods=[True, True], reorder=False)
    model = RankModel(cart, grid, decomp, precision)
    model.steps(step_constants(precision, first=True), 1)  # forward; compiles, first-touches
    model.reset()
    leapfrog = step_constants(precision, first=False)
    rapl = RaplReader() if cart.rank == 0 else None
    cart.Barrier()
    before = rapl.snapshot() if rapl and rapl.available else None
    t0 = MPI.Wtime()
    done = 0
    while done < steps:  # compiled chunks between the global sums
        chunk = min(diag_every or steps, steps - done)
        model.steps(leapfrog, chunk)
        done += chunk
        if diag_every and done % diag_every == 0:
            model.reduce_mass()
    elapsed = MPI.Wtime() - t0
    cart.Barrier()
    energy = None
    if rapl is not None:
        energy = rapl.energy(before, rapl.snapshot()) if before else rapl.describe_absence()
    total_mass = model.reduce_mass()
    if config.get("fields_out"):
        arrays = {name: getattr(model.state, name) for name in ShallowState._fields}
        np.savez(f"{config['fields_out']}.{cart.rank}.npz", origin=np.array(model.origin), **arrays)
    mine = {
        "rank": cart.rank,
        "coords": list(model.coords),
        "host": MPI.Get_processor_name(),
        "cpus": sorted(os.sched_getaffinity(0)),
        "seconds": elapsed,
        "loops": model.loop_seconds(steps),
        "exchanges": model.exchange_seconds(steps),
        "reduction": model.reduction if diag_every else 0.0,
    }
    ranks = cart.gather(mine, root=0)
    root = cart.rank == 0
    cart.Free()  # a calibration job runs dozens of cases, each with its own grid
    if not root:
        return None
    return {
        "local_shape": list(model.local),
        "ranks": ranks,
        "energy": energy,
        "mass": total_mass,
        "reductions": steps // diag_every if diag_every else 0,
    }


def main(argv: list[str]) -> None:
    comm = MPI.COMM_WORLD
    try:
        config, out = json.loads(argv[1]), Path(argv[2])
        if "cases" in config:
            results = [run_rank(comm, case) for case in config["cases"]]
            result = None if comm.rank else results
        else:
            result = run_rank(comm, config)
        if result is not None:
            tmp = out.with_suffix(".partial")
            tmp.write_text(json.dumps(result))
            tmp.replace(out)
    except BaseException as exc:  # any failure ends the whole job, with one line
        print(f"rank {comm.rank}: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        comm.Abort(1)


if __name__ == "__main__":
    main(sys.argv)
