"""The shallow-water loops' stored points of one node class and environment: what a
calibration near a grid (:mod:`benchdb.collectors.app.near`) refreshes, and the curves it
must find first.  These are the points the lookup pools (:mod:`benchdb.db.scope`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import Select, select

from .engine import Database
from .models import Environment, Kernel, Machine, Measurement, NodeClass, Run


def _shallow_points(node_class: str, environment: str, *columns: Any) -> Select:
    """``columns`` of the shallow measurements of node class ``node_class`` and environment
    ``environment`` (fingerprints)."""
    return (
        select(*columns)
        .join(Run, Run.id == Measurement.run_id)
        .join(Machine, Machine.id == Run.machine_id)
        .join(NodeClass, NodeClass.id == Machine.node_class_id)
        .join(Environment, Environment.id == Run.environment_id)
        .join(Kernel, Kernel.id == Measurement.kernel_id)
        .where(
            NodeClass.fingerprint == node_class,
            Environment.fingerprint == environment,
            Kernel.name.like("shallow.%"),
        )
        .distinct()
    )


def shallow_contexts(
    db: Database, node_class: str, environment: str, contexts: Iterable[str], skip_tag: str
) -> set[str]:
    """Those of ``contexts`` in which the shallow loops were measured (node class and
    environment by fingerprint), by runs not tagged ``skip_tag``."""
    stmt = _shallow_points(node_class, environment, Run.id, Measurement.context).where(
        Measurement.context.in_(list(contexts))
    )
    with db.session() as s:
        return {c for run_id, c in s.execute(stmt) if skip_tag not in s.get_one(Run, run_id).tags}


def shallow_shapes_between(
    db: Database,
    node_class: str,
    environment: str,
    *,
    context: str,
    precision: str,
    footprints: tuple[int, int],
) -> set[tuple[int, int]]:
    """The shapes of the shallow points measured in ``context`` and ``precision`` whose
    footprint lies in ``footprints`` (bytes, both ends included)."""
    stmt = _shallow_points(node_class, environment, Measurement.shape).where(
        Measurement.context == context,
        Measurement.precision == precision,
        Measurement.footprint_bytes.between(*footprints),
    )
    with db.session() as s:
        return {(int(a), int(b)) for a, b in s.scalars(stmt)}
