"""Reading a test database's state back: row counts and runs."""

from __future__ import annotations

from sqlalchemy import func, select

from benchdb.db.engine import open_database
from benchdb.db.models import Environment, Kernel, Machine, Measurement, NodeClass, Run

TABLES = {
    "node_class": NodeClass,
    "machine": Machine,
    "environment": Environment,
    "kernel": Kernel,
    "run": Run,
    "measurement": Measurement,
}


def counts(url: str) -> dict[str, int]:
    """Rows per table."""
    db = open_database(url)
    try:
        with db.session() as s:
            return {
                name: s.scalar(select(func.count()).select_from(model))
                for name, model in TABLES.items()
            }
    finally:
        db.close()


def runs(url: str) -> list[dict]:
    """Every run: its points as (kernel, shape_key, threads, precision), passes, sample
    counts, flags."""
    db = open_database(url)
    try:
        with db.session() as s:
            out = []
            for run in s.scalars(select(Run).order_by(Run.id)):
                rows = s.execute(
                    select(
                        Measurement.id,
                        Kernel.name,
                        Measurement.shape_key,
                        Measurement.threads,
                        Measurement.precision,
                        Measurement.passes,
                        func.json_array_length(Measurement.samples),
                        Measurement.flags,
                    )
                    .join(Kernel, Measurement.kernel_id == Kernel.id)
                    .where(Measurement.run_id == run.id)
                ).all()
                out.append(
                    {
                        "id": run.id,
                        "status": run.status,
                        "config": run.config,
                        "environment": run.environment.threading_layer,
                        "measurement_ids": {r[0] for r in rows},
                        "points": [tuple(r[1:5]) for r in rows],
                        "passes": [r[5] for r in rows],
                        "sample_counts": [r[6] for r in rows],
                        "flags": [r[7] for r in rows],
                    }
                )
            return out
    finally:
        db.close()
