"""What the coordinator of ``benchdb ab`` and its two workers say to each other.

One JSON object per line: the coordinator writes a request ``{"op": ..., ...}`` on
a worker's stdin, the worker answers with one line on its stdout (the worker moves
anything its kernels print to stderr, so the channel stays parseable).  A reply
with ``"error"`` is bad input on that side (a plugin that does not import, a kernel
that fails its check): the command stops before anything is stored.  A reply with
``"failure"`` is a point that could not be measured (:class:`~benchdb.kernels.api.
PointFailure`): stored invalid, and the sweep goes on.

==============  ====================================  ===================================
op              request                               reply
==============  ====================================  ===================================
``plan``        :class:`PlanRequest` fields           points, plan config, environment,
                                                      kernels, checked benchmarks
``prepare``     point, first CPU to pin to, the       checksum, points per kernel,
                arrays' layout seed                   placement
``calibrate``   --                                    repetitions
``sample``      repetitions                           seconds per repetition by kernel,
                                                      evidence
``release``     --                                    --
``quit``        --                                    (no reply; the worker exits)
==============  ====================================  ===================================
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from benchdb.evidence import Evidence

from ...kernels.api import KernelInfo
from ...kernels.layout import Layout

SIDES = ("base", "change")
WORKER_MODULE = "benchdb.collectors.ab.worker"


@dataclass(frozen=True)
class Side:
    """One version of the code: the Python that runs its worker (a virtualenv's, with
    its own benchdb and plug-ins), extra environment variables, and the user code
    (``--program`` specs, ``--plugin`` modules) only this side loads."""

    name: str
    python: str = sys.executable
    env: Mapping[str, str] = field(default_factory=dict)
    programs: tuple[str, ...] = ()
    plugins: tuple[str, ...] = ()

    def argv(self) -> list[str]:
        return [self.python, "-m", WORKER_MODULE]

    def describe(self) -> dict[str, Any]:
        """What the side's run stores in its config (``ab``) and the resume key hashes."""
        return {
            "python": self.python,
            "env": dict(sorted(self.env.items())),
            "programs": list(self.programs),
            "plugins": list(self.plugins),
        }

    def label(self) -> str:
        """One line for the user: how this side differs."""
        parts = [] if self.python == sys.executable else [self.python]
        parts += [f"{k}={shlex.quote(v)}" for k, v in sorted(self.env.items())]
        parts += [f"program {p}" for p in self.programs] + [f"plugin {p}" for p in self.plugins]
        return ", ".join(parts) or "this Python, this environment"


@dataclass(frozen=True)
class PlanRequest:
    """What both workers build their sweep from (the same points on both sides)."""

    kernels: tuple[str, ...] | None
    sizes: str | None
    footprints: str | None
    precision: str
    threads: int
    sample_time: float
    pairs: int  # clean pairs per trial
    trials: int = 3  # preparations of each point, per side
    processes: int = 1  # pairs of workers, each placed in memory its own way

    def message(self, side: Side) -> dict[str, Any]:
        body = asdict(self)
        body["kernels"] = list(self.kernels) if self.kernels else None
        del body["trials"], body["processes"]  # the coordinator's to run, not the worker's
        body["programs"], body["plugins"] = list(side.programs), list(side.plugins)
        return {"op": "plan", **body}


def encode(message: Mapping[str, Any]) -> str:
    return json.dumps(message, allow_nan=True) + "\n"


def decode(line: str) -> dict[str, Any]:
    return json.loads(line)


def kernel_to_json(info: KernelInfo) -> dict[str, Any]:
    """A kernel's metadata as the worker sends it (the coordinator registers it)."""
    body = {f: getattr(info, f) for f in KernelInfo.__dataclass_fields__}
    body["extra"] = dict(info.extra)
    body["layout"] = None if info.layout is None else info.layout.to_json()
    return body


def kernel_from_json(body: Mapping[str, Any]) -> KernelInfo:
    layout = body.get("layout")
    return KernelInfo(
        **{
            **{k: v for k, v in body.items() if k in KernelInfo.__dataclass_fields__},
            "layout": None if layout is None else Layout.from_json(layout),
        }
    )


def evidence_from_json(body: Mapping[str, Any]) -> Evidence:
    return Evidence(**{k: body[k] for k in Evidence.__dataclass_fields__ if k in body})
