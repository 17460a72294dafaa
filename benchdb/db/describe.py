"""Plain-dict descriptions of runs and hosts for tables, JSON and reports."""

from __future__ import annotations

from typing import Any

from .models import Machine, Run


def run_summary(run: Run) -> dict[str, Any]:
    """The fields a user needs to recognise a run."""
    env = run.environment
    return {
        "run_id": run.id,
        "tags": list(run.tags or []),
        "status": run.status,
        "started_at": run.started_at,
        "machine_id": run.machine_id,
        "host": run.machine.hostname,
        "environment_id": run.environment_id,
        "git_commit": env.git_commit,
        "numba": env.numba,
        "threading_layer": env.threading_layer,
    }


def machine_summary(machine: Machine) -> dict[str, Any]:
    """A host and its node class."""
    return {
        "machine_id": machine.id,
        "hostname": machine.hostname,
        "fingerprint": machine.fingerprint,
        "node_class_id": machine.node_class_id,
        "node_class": machine.node_class.fingerprint,
        "cpu_model": machine.node_class.cpu_model,
    }
