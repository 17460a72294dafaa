"""The two runs of ``benchdb ab``: started together, linked, and found again to continue.

Each side is stored as an ordinary kernel collection (kind ``kernels``), so
``compare``, ``history`` and ``report`` show it like any other run: on this machine,
under the side's own environment (its Python's numba and libraries, its
``NUMBA_*`` variables), with the side's kernel versions.  What makes them a pair
is in their config: ``mode`` ``ab``, and ``ab`` = the side, the other run's uuid
(``pair``: a natural key that survives ``benchdb import``), the order, and how the
side was started.  Their ``sweep_hash`` covers both sides' plans and how the sides
differ, so re-running the same command finds the unfinished pair
(:func:`~benchdb.db.resume.find_resumable`, as ``collect`` does), and a
``collect`` never takes one side for its own sweep.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from benchdb.db import resume
from benchdb.db.engine import Database
from benchdb.db.repo import register_environment, register_kernel, register_machine
from benchdb.db.runs import ab_pair, this_process_run
from benchdb.db.runstate import RunStatus
from benchdb.environment import EnvironmentInfo
from benchdb.errors import UserError
from benchdb.hashing import content_hash
from benchdb.machine import MachineInfo

from ...kernels.api import KernelInfo
from ..sweep import new_uuid
from .protocol import SIDES, PlanRequest, Side, kernel_from_json

AB_TAG = "ab"


@dataclass(frozen=True)
class SidePlan:
    """What a side's worker planned: its sweep config, environment and kernels."""

    side: Side
    config: Mapping[str, Any]
    environment: EnvironmentInfo
    kernels: tuple[KernelInfo, ...]

    @classmethod
    def from_reply(cls, side: Side, reply: Mapping[str, Any]) -> SidePlan:
        known = {f.name for f in fields(EnvironmentInfo)}
        env = EnvironmentInfo(**{k: v for k, v in reply["environment"].items() if k in known})
        kernels = tuple(kernel_from_json(k) for k in reply["kernels"])
        return cls(side, reply["config"], env, kernels)


def pair_key(plans: Mapping[str, SidePlan], order: str, request: PlanRequest) -> str:
    """The ``sweep_hash`` of both runs: the same command gives the same key."""
    return content_hash(
        {
            "order": order,
            "trials": request.trials,
            **({"processes": request.processes} if request.processes > 1 else {}),
            **{
                side: {"plan": p.config["sweep_hash"], "side": p.side.describe()}
                for side, p in plans.items()
            },
        }
    )


def register_kernels(
    db: Database, plans: Mapping[str, SidePlan]
) -> dict[str, dict[str, tuple[int, KernelInfo]]]:
    """Per side, kernel name -> (id, info): each side's own kernel versions."""
    with db.session() as s:
        return {
            side: {k.name: (register_kernel(s, k).id, k) for k in p.kernels}
            for side, p in plans.items()
        }


def open_pair(
    db: Database,
    machine: MachineInfo,
    plans: Mapping[str, SidePlan],
    order: str,
    request: PlanRequest,
    tags: Sequence[str],
) -> tuple[dict[str, int], bool]:
    """(run id by side, resumed?): the unfinished pair of this command, claimed, else two
    new runs."""
    key = pair_key(plans, order, request)
    with db.session() as s:
        machine_id = register_machine(s, machine).id
        base_env = register_environment(s, plans["base"].environment).id
    found = resume.find_resumable(
        db, machine_id, base_env, key, mode=resume.AB_MODE, statuses=resume.RESUMABLE
    )
    pair = None if found is None else ab_pair(db, found)
    if pair is not None:
        if not resume.claim(db, pair["base"], pair["change"]):
            raise UserError(
                f"runs {pair['base']} and {pair['change']} were taken by another `benchdb ab`; "
                "try again"
            )
        return pair, True
    uuids = {side: new_uuid() for side in SIDES}
    runs = {}
    with db.session() as s:
        for side, other in zip(SIDES, SIDES[::-1], strict=True):
            plan = plans[side]
            config = {
                **plan.config,
                "mode": resume.AB_MODE,
                "sweep_hash": key,
                "uuid": uuids[side],
                "ab": {
                    "side": side,
                    "pair": uuids[other],
                    "order": order,
                    "trials": request.trials,
                    "processes": request.processes,
                    "plan_hash": plan.config["sweep_hash"],
                    **plan.side.describe(),
                },
            }
            runs[side] = this_process_run(
                s,
                kind=resume.RUN_KIND,
                status=RunStatus.RUNNING,
                config=config,
                tags=[*tags, AB_TAG, f"{AB_TAG}:{side}"],
                machine=machine,
                environment=plan.environment,
            ).id
    return runs, False
