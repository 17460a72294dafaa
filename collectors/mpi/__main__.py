"""Entry point run on every rank: ``python -m benchdb.collectors.mpi [options]``.

Start it under ``mpiexec -n N`` or ``srun``, or let ``benchdb comm collect``
(or ``benchdb slurm comm``) start it.  Rank 0 opens the database before any
timing (so a bad URL fails fast), all ranks run the benchmarks together, and
rank 0 commits every point as it is measured (:mod:`.results`); the run is
``complete`` once every rank has reported success.  A rank that fails prints
one line ``benchdb-comm-error: ...`` on stderr and aborts the whole job
(``MPI_Abort``); the points measured so far stay, and the same job started
again continues the run, measuring only the points it lacks.

Lines on rank 0's stdout that start with ``benchdb-progress`` / ``benchdb-result``
are JSON for the launcher.
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import time
from collections.abc import Iterator
from contextlib import nullcontext
from typing import Any

from mpi4py import MPI

from benchdb.db.runs import run_lifecycle
from benchdb.hashing import content_hash

from . import faults
from .job_output import BENCHMARKS, ERROR, PROGRESS, RESULT
from .results import CommPoint, Skip


def _int_list(text: str) -> list[int]:
    values = [int(v) for v in text.split(",") if v.strip()]
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of positive integers")
    return values


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m benchdb.collectors.mpi", description=__doc__)
    p.add_argument("--db", help="database URL; without it nothing is written (see --print)")
    p.add_argument("--print", action="store_true", help="print all points as JSON on rank 0")
    p.add_argument("--benchmarks", default=",".join(BENCHMARKS), help="comma-separated subset")
    p.add_argument("--max-bytes", type=int, default=4 << 20, help="largest ping-pong message")
    p.add_argument("--sizes", type=_int_list, help="explicit ping-pong sizes (bytes)")
    p.add_argument("--samples", type=int, default=7)
    p.add_argument("--min-sample-time", type=float, default=0.002, help="seconds per sample")
    p.add_argument("--decomp", type=_int_list, help="halo grid PX,PY (default MPI_Dims_create)")
    p.add_argument("--halo-local", type=_int_list, default=[16, 64, 256, 1024])
    p.add_argument("--halo-width", type=_int_list, default=[1])
    p.add_argument("--halo-fields", type=_int_list, default=[1, 3])
    p.add_argument("--allreduce-bytes", type=_int_list, default=[8, 64, 1024, 16384])
    p.add_argument("--tag", action="append", default=[])
    p.add_argument("--progress", action="store_true", help="emit progress lines for the launcher")
    return p


def _plan(args: argparse.Namespace, size: int) -> list[str]:
    chosen = [b.strip() for b in args.benchmarks.split(",") if b.strip()]
    unknown = sorted(set(chosen) - set(BENCHMARKS))
    if unknown:
        raise ValueError(f"unknown benchmark(s) {unknown}; choose from {list(BENCHMARKS)}")
    if size < 2:
        raise ValueError("the benchmarks need at least 2 ranks (start with mpiexec -n 2 or more)")
    if args.samples < 1 or args.min_sample_time <= 0:
        raise ValueError("--samples must be >= 1 and --min-sample-time > 0")
    if args.decomp and (len(args.decomp) != 2 or args.decomp[0] * args.decomp[1] != size):
        raise ValueError(f"--decomp {args.decomp} does not multiply to the {size} ranks")
    return [b for b in BENCHMARKS if b in chosen and not (b == "pairs" and size < 4)]


def _points(
    args: argparse.Namespace, comm: MPI.Comm, plan: list[str], infos, skip: Skip
) -> Iterator[CommPoint]:  # type: ignore[no-untyped-def]
    from . import allreduce, halo2d, pointtopoint
    from .message_sizes import message_sizes

    sizes = args.sizes or message_sizes(args.max_bytes)
    common = dict(samples=args.samples, min_time=args.min_sample_time, skip=skip)
    for name in plan:
        if name == "pingpong":
            yield from pointtopoint.pingpong(comm, infos, sizes, **common)
        elif name == "exchange":
            yield from pointtopoint.exchange(comm, infos, sizes, **common)
        elif name == "pairs":
            yield from pointtopoint.concurrent_pairs(comm, infos, sizes, **common)
        elif name == "halo2d":
            dims = tuple(args.decomp or MPI.Compute_dims(comm.size, 2))
            configs = [
                (n, h, f)
                for n in args.halo_local
                for h in args.halo_width
                for f in args.halo_fields
            ]
            yield from halo2d.halo2d(comm, infos, dims, configs, **common)
        elif name == "allreduce":
            yield from allreduce.allreduce(comm, infos, args.allreduce_bytes, **common)


def _expected_points(args: argparse.Namespace, comm: MPI.Comm, plan: list[str], infos) -> int:  # type: ignore[no-untyped-def]
    from .allreduce import rank_counts
    from .message_sizes import message_sizes
    from .pointtopoint import partners

    nsizes = len(args.sizes or message_sizes(args.max_bytes))
    per = {
        "pingpong": len(partners(infos)) * nsizes,
        "exchange": len(partners(infos)) * nsizes,
        "pairs": (comm.size // 2) * nsizes,
        "halo2d": len(args.halo_local) * len(args.halo_width) * len(args.halo_fields),
        "allreduce": len(rank_counts(comm.size)) * len(args.allreduce_bytes),
    }
    return sum(per[b] for b in plan)


def _emit(tag: str, payload: dict[str, Any]) -> None:
    print(f"{tag} {json.dumps(payload)}", flush=True)


def _plan_config(args: argparse.Namespace, comm: MPI.Comm, plan: list[str], infos) -> dict:  # type: ignore[no-untyped-def]
    """What the points depend on; its hash decides which unfinished run a job continues."""
    from .message_sizes import message_sizes
    from .placement import node_mapping

    return {
        "ranks": comm.size,
        "benchmarks": plan,
        "sizes": args.sizes or message_sizes(args.max_bytes),
        "samples": args.samples,
        "min_sample_time": args.min_sample_time,
        "decomp": args.decomp,
        "halo": [args.halo_local, args.halo_width, args.halo_fields],
        "allreduce_bytes": args.allreduce_bytes,
        "node_of": node_mapping(infos),
    }


def run(argv: list[str] | None = None) -> None:
    comm = MPI.COMM_WORLD
    args = parser().parse_args(argv)
    plan = _plan(args, comm.size)
    db = None
    if comm.rank == 0 and args.db:
        from benchdb.db.engine import open_database

        db = open_database(args.db)
    from .placement import local_info

    infos = comm.allgather(local_info(comm.rank))
    config = {
        "ranks": comm.size,
        "benchmarks": plan,
        "samples": args.samples,
        "min_sample_time": args.min_sample_time,
        "hosts": sorted({i.node for i in infos}),
        "affinity": {i.rank: list(i.cpus) for i in infos},
        "mpi_library": MPI.Get_library_version().splitlines()[0],
        "sweep_hash": content_hash(_plan_config(args, comm, plan, infos)),
    }
    opened = None
    if db is not None:
        from .results import open_run

        opened = open_run(db, config, args.tag)
    done = comm.bcast(sorted(opened.done) if opened else [], root=0)
    done_keys = {tuple(k) for k in done}
    total = _expected_points(args, comm, plan, infos)
    measured = 0
    start = time.time()
    points: list[CommPoint] = []
    with run_lifecycle(db, opened.run_id) if opened else nullcontext():
        for point in _points(args, comm, plan, infos, lambda key: key in done_keys):
            if opened is not None:
                from .results import write_point

                write_point(db, opened.run_id, point)
            points.append(point)
            measured += 1
            faults.checkpoint(comm.rank)
            if comm.rank == 0 and args.progress:
                _emit(
                    PROGRESS,
                    {
                        "done": len(done_keys) + measured,
                        "total": total,
                        "what": point.params_key
                        or f"{point.benchmark} {point.placement} {point.message_bytes} B",
                    },
                )
        ok = comm.gather(True, root=0)  # every rank got here: the job as a whole succeeded
    if comm.rank != 0:
        return
    assert ok is not None and all(ok)
    summary: dict[str, Any] = {
        "run_id": opened.run_id if opened else None,
        "resumed": bool(opened and opened.resumed),
        "points": len(done_keys) + measured,
        "measured": measured,
        "config": {**config, "seconds": round(time.time() - start, 3)},
    }
    if args.print:
        summary["data"] = [p.to_dict() for p in points]
    _emit(RESULT, summary)


def main() -> None:
    comm = MPI.COMM_WORLD
    try:
        run()
    except SystemExit as exc:  # argparse: usage error, already printed
        if exc.code:
            comm.Abort(2)
        raise
    except BaseException as exc:  # any failure on any rank ends the whole job
        line = " ".join(str(exc).split()) or type(exc).__name__
        sys.stderr.write(
            f"{ERROR}: rank {comm.rank} on {socket.gethostname()}: {type(exc).__name__}: {line}\n"
        )
        sys.stderr.flush()
        comm.Abort(1)


if __name__ == "__main__":
    main()
