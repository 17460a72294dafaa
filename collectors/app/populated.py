"""Loop curves of a *populated* node: the shallow sweep run by P ranks at once.

Paper 001 (section 4) keeps separate per-cell compute curves for one and for
four processes per node: ranks on one node share memory bandwidth and the
last-level cache, so a loop runs slower when its neighbours are busy.  The
collectors time one process; here every rank of an ``mpiexec -n P`` job
prepares the same point and times it in lock step (a barrier before every
sample; rank 0 calibrates the repetitions and broadcasts them), so every
sample is taken with all P processes busy on the same work.  Every rank reads
its own disturbance evidence around each sample (:mod:`..probes`); a sample is
as disturbed as its most disturbed rank (the ranks step in lock step, so one
rank off its core holds up the rest), and the ranks agree on it at once, so
that all of them retake it together, as a single collector does, up to
:data:`..timing.RETAKES_PER_SAMPLE` more per sample.  Each point is
stepped the way a P-rank run steps its block, not as the serial benchmark
does (:mod:`.instep`: the loops run slower that way), so the curve
has the run's ten loops and copy, without the serial boundary phases.  Like the
collector, the sweep runs in passes (the second in reverse order) whose
samples are pooled per point: one disturbed spell then spoils a third of a
point's samples, not its median (docs/findings/app-loop-curves.md).  The stored
sample is the mean over the ranks of that sample's per-repetition time; the
context ``fullstep:ppnP`` (:class:`benchdb.app.context.LoopContext`)
tells these curves from the single-process ``fullstep`` ones.

``python -m benchdb.collectors.app.populated CONFIG_JSON OUT_JSON`` (started
by :func:`calibrate_populated`).
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchdb.app.context import LoopContext
from benchdb.db.engine import Database
from benchdb.db.point_rows import add_points
from benchdb.db.repo import register_kernel
from benchdb.db.runs import recorded_run
from benchdb.db.runstate import RunKind
from benchdb.errors import UserError
from benchdb.evidence import Evidence, from_columns, most_disturbed, to_columns
from benchdb.machine import MachineInfo, available_memory_bytes
from benchdb.units import fmt_bytes

from ...kernels import get_benchmark
from ..plan import Point, SweepPlan, build_plan
from ..probes import Probe
from ..record import add_pass, measurement_rows
from ..timing import RETAKES_PER_SAMPLE, PointTiming, calibrate
from .instep import DistributedStepPoint
from .launch import failure_message, run_mpi

MODULE = "benchdb.collectors.app.populated"


def _time_point(comm: Any, point: Point, sample_time: float, samples: int) -> dict[str, Any]:
    import numpy as np

    prepared = DistributedStepPoint(point.shape, point.precision)
    checksum = prepared.checksum()  # after the forward step: the same in every pass
    prepared.run(1)  # warm-up
    mine: dict[str, list[float]] = {}
    seen: list[Evidence] = []
    with Probe() as probe:
        reps = comm.bcast(
            calibrate(prepared, sample_time, probe) if comm.rank == 0 else None, root=0
        )
        clean = 0
        while clean < samples and len(seen) < samples * (1 + RETAKES_PER_SAMPLE):
            comm.Barrier()
            times, evidence = probe.measure(lambda: prepared.run(reps))
            for kernel, seconds in times.items():
                mine.setdefault(kernel, []).append(seconds / reps)
            seen.append(evidence)
            clean += not comm.allreduce(evidence.disturbed)  # any rank: all retake
    prepared.close()
    every = comm.gather((mine, seen), root=0)
    if comm.rank != 0:
        return {}
    per_kernel = {k: np.mean([r[k] for r, _ in every], axis=0).tolist() for k in mine}
    lock_step = [most_disturbed(ranks) for ranks in zip(*(e for _, e in every), strict=True)]
    return {
        "repetitions": reps,
        "samples": per_kernel,
        "checksum": checksum,
        "evidence": to_columns(lock_step),
        "wanted": samples,
    }


def main(argv: list[str]) -> None:
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    try:
        plan, out = SweepPlan.from_config(json.loads(argv[1])), Path(argv[2])
        index = {p.key: i for i, p in enumerate(plan.points)}
        results: list[list[dict[str, Any]]] = [[] for _ in plan.points]
        for _, point in plan.schedule({}):
            timed = _time_point(comm, point, plan.sample_time, plan.samples)
            results[index[point.key]].append(timed)
        if comm.rank == 0:
            tmp = out.with_suffix(".partial")
            tmp.write_text(json.dumps(results))
            tmp.replace(out)
    except BaseException as exc:  # one line, and the whole job ends
        print(f"rank {comm.rank}: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        comm.Abort(1)


def _timing(result: dict[str, Any]) -> PointTiming:
    """One pass's result of a point, as the ranks wrote it, with its evidence."""
    n = len(next(iter(result["samples"].values()), []))
    evidence = tuple(e for e in from_columns(result["evidence"], n) if e is not None)
    return PointTiming(
        result["repetitions"], result["samples"], result["checksum"], evidence, result["wanted"]
    )


def check_ranks(ranks: int, cores: int) -> None:
    """UserError unless 2 <= ``ranks`` <= ``cores``."""
    if not 2 <= ranks <= cores:
        raise UserError(
            f"--ranks {ranks}: a populated node needs 2 to {cores} ranks "
            "(one per core of this machine)"
        )


def populated_plan(
    machine: MachineInfo, ranks: int, *, quick: bool = False, sizes_spec: str | None = None
) -> SweepPlan:
    """The sweep ``ranks`` busy processes run; UserError for a bad rank count, bad sizes
    or sizes whose blocks do not fit in memory (checked before a database is opened)."""
    check_ranks(ranks, machine.cores)
    plan = build_plan(machine, kernels=["shallow"], sizes_spec=sizes_spec, quick=quick)
    # each rank builds the block's initial fields, then copies them into its own arrays
    worst = 2 * max(p.footprint_bytes for p in plan.points) * ranks
    if worst > available_memory_bytes():
        raise UserError(f"{ranks} ranks at the largest size need {fmt_bytes(worst)}; use --sizes")
    return plan


def calibrate_populated(
    db: Database,
    ranks: int,
    *,
    quick: bool = False,
    sizes_spec: str | None = None,
    timeout: float | None = None,
    tags: Sequence[str] = (),
) -> tuple[int, int]:
    """Measure the shallow curves with ``ranks`` busy processes; (run id, points stored)."""
    from ..sweep import detect_context

    ctx = detect_context()
    plan = populated_plan(ctx.machine, ranks, quick=quick, sizes_spec=sizes_spec)
    config = plan.config()
    with tempfile.TemporaryDirectory(prefix="benchdb-ppn-") as tmp:
        out = Path(tmp) / "result.json"
        proc = run_mpi(ranks, MODULE, [json.dumps(config), str(out)], timeout=timeout)
        if proc.returncode != 0 or not out.exists():
            raise UserError(
                f"the MPI calibration failed ({failure_message(proc)}); nothing was written"
            )
        results = json.loads(out.read_text())
    bench = get_benchmark("shallow")
    with db.session() as s:
        kernels = {k.name: (register_kernel(s, k).id, k) for k in bench.kernels}
    stored = 0
    with (
        recorded_run(
            db,
            kind=RunKind.APP_CALIBRATE,
            config={**config, "ranks": ranks},
            tags=[f"ppn{ranks}", *tags],
            machine=ctx.machine,
            environment=ctx.environment,
        ) as run,
        db.session() as s,
    ):
        for point, passes in zip(plan.points, results, strict=True):
            first, *later = (_timing(r) for r in passes)
            rows = measurement_rows(
                run.id,
                point,
                bench.kernel_points(point.shape),
                first,
                f"ppn{ranks}:bind-core",
                kernels,
                str(LoopContext(ranks)),
            )
            for row in rows:
                for timing in later:
                    add_pass(row, timing, kernels)
            add_points(s, rows)
            stored += len(rows)
    return run.id, stored


if __name__ == "__main__":
    main(sys.argv)
