"""The worker of ``benchdb ab``: one side's kernels, measured on request.

Run by the side's own Python (``python -m benchdb.collectors.ab.worker``, with the
side's environment variables), so the kernels compile with that side's numba,
benchdb and plug-ins.  It answers the requests of :mod:`.protocol`, one JSON line
each, and reuses the collector's own steps: the plan (:func:`~benchdb.collectors.
plan.build_plan`), the check of every kernel against its numpy reference before
anything is measured (:func:`~benchdb.collectors.sweep.verify_plan`), the
calibration (:func:`~benchdb.collectors.timing.calibrate`) and the sample with its
evidence (:func:`~benchdb.collectors.timing.take_sample`).  Which samples to take,
and when, is the coordinator's: that is what makes the two sides' samples pairs.

Ctrl-C reaches the whole process group; the worker ignores it and ends when the
coordinator closes its stdin, so an interrupted ``ab`` stores what it finished.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Mapping
from contextlib import ExitStack
from dataclasses import asdict
from typing import Any, TextIO

from benchdb.environment import detect_environment
from benchdb.errors import UserError
from benchdb.machine import detect_machine

from ...kernels.api import KernelError, PointFailure, Prepared, SelfTimed
from ...kernels.jit import OPTIONS
from .. import plan as planning
from ..pinning import pinned, start_numba_threads
from ..probes import Probe
from ..sweep import verify_plan
from ..timing import calibrate, probe_for, take_sample
from .array_layout import relocate
from .protocol import decode, encode, kernel_to_json


class Worker:
    """The state between requests: the side's plan, and the point prepared now."""

    def __init__(self) -> None:
        self.sweep: planning.SweepPlan | None = None
        self.prepared: Prepared | None = None
        self.point: ExitStack | None = None  # the pinning and the probe of the point
        self.probe: Probe | None = None

    def plan(self, req: dict[str, Any]) -> dict[str, Any]:
        catalog = planning.load_user_code(req["programs"], req["plugins"])
        self.sweep = planning.build_plan(
            detect_machine(),
            kernels=req["kernels"],
            sizes_spec=req["sizes"],
            footprints_spec=req["footprints"],
            threads=[req["threads"]],
            precisions=[req["precision"]],
            sample_time=req["sample_time"],
            samples=req["pairs"],
            passes=1,
            catalog=catalog,
        )
        checked = verify_plan(self.sweep)
        environment = detect_environment(threading_layer=start_numba_threads(), options=OPTIONS)
        return {
            "points": [
                [*p.to_json(), p.footprint_bytes, dict(self._kernel_points(p))]
                for p in self.sweep.points
            ],
            "config": self.sweep.config(),
            "environment": environment.to_dict(),
            "kernels": [kernel_to_json(k) for b in self.sweep.benchmarks() for k in b.kernels],
            "checked": list(dict.fromkeys(c.benchmark for c in checked)),
            "benchmark_of": {k.name: b.name for b in self.sweep.benchmarks() for k in b.kernels},
        }

    def _kernel_points(self, point: planning.Point) -> Mapping[str, int]:
        assert self.sweep is not None
        return self.sweep.catalog.get(point.benchmark).kernel_points(point.shape)

    def prepare(self, req: dict[str, Any]) -> dict[str, Any]:
        assert self.sweep is not None, "plan before prepare"
        self.release({})
        name, shape, precision, threads = req["point"]
        bench = self.sweep.catalog.get(name)
        stack = ExitStack()
        placement = stack.enter_context(pinned(threads, req.get("first_cpu", 0)))
        try:
            prepared = bench.prepare(tuple(shape), precision, threads)
            if "layout" in req:
                relocate(prepared, int(req["layout"]))
            checksum = prepared.checksum()
            if not isinstance(prepared, SelfTimed):
                prepared.run(1)  # warm-up: excluded from every sample
            self.probe = stack.enter_context(probe_for(prepared))
        except BaseException:
            stack.close()
            raise
        self.prepared, self.point = prepared, stack
        return {"checksum": checksum, "placement": placement}

    def calibrate(self, req: dict[str, Any]) -> dict[str, Any]:
        assert self.sweep is not None and self.prepared is not None and self.probe is not None
        return {"repetitions": calibrate(self.prepared, self.sweep.sample_time, self.probe)}

    def sample(self, req: dict[str, Any]) -> dict[str, Any]:
        assert self.prepared is not None and self.probe is not None
        times, seen = take_sample(self.prepared, int(req["repetitions"]), self.probe)
        return {"times": times, "evidence": asdict(seen)}

    def release(self, req: dict[str, Any]) -> dict[str, Any]:
        self.prepared, self.probe = None, None  # free the arrays before the next point allocates
        if self.point is not None:
            self.point.close()
            self.point = None
        return {}


def serve(requests: TextIO, replies: TextIO) -> None:
    """Answer requests until ``quit`` or the end of ``requests``."""
    worker = Worker()
    for line in requests:
        req = decode(line)
        if req["op"] == "quit":
            break
        handlers = {
            "plan": worker.plan,
            "prepare": worker.prepare,
            "calibrate": worker.calibrate,
            "sample": worker.sample,
            "release": worker.release,
        }
        try:
            reply = handlers[req["op"]](req)
        except (UserError, KernelError) as exc:
            reply = {"error": str(exc)}
        except PointFailure as exc:
            worker.release({})
            reply = {"failure": exc.reason}
        replies.write(encode(reply))
        replies.flush()
    worker.release({})


def main() -> None:
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # what kernels print goes to stderr
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    serve(sys.stdin, replies)


if __name__ == "__main__":
    main()
