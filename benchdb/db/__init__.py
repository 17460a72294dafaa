"""The relational data layer: ORM entities, engine, migrations, repositories, and every
query on the entities (docs/design.md "Layout and dependency direction")."""

from .engine import Database, open_database, resolve_url
from .models import (
    Base,
    Baseline,
    CommMeasurement,
    Environment,
    Kernel,
    Machine,
    Measurement,
    Model,
    NodeClass,
    Run,
)

__all__ = [
    "Base",
    "Baseline",
    "CommMeasurement",
    "Database",
    "Environment",
    "Kernel",
    "Machine",
    "Measurement",
    "Model",
    "NodeClass",
    "Run",
    "open_database",
    "resolve_url",
]
