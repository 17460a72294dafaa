"""ORM entities (SQLAlchemy 2.x typed declarative), as docs/design.md's data model.

Only portable column types are used (generic ``JSON``, no ARRAY/JSONB) so that
the same schema runs on the embedded SQLite default and on a shared
PostgreSQL.  Times are seconds, sizes bytes, rates flop/s or B/s (SI units in
storage).  The alembic revisions in ``benchdb.migrations`` must create exactly
this metadata; ``tests/db/test_migrations.py`` checks that autogenerate finds
no difference.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from .runstate import RunStatus, utcnow

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


# The alembic revision that creates exactly this metadata.  Opening a database
# already at this revision needs no alembic import (a fast `benchdb predict`);
# tests/db/test_migrations.py fails if a new revision forgets to bump it.
SCHEMA_HEAD = "0012"


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class NodeClass(Base):
    """What sets a node's performance (:mod:`benchdb.node_class`): identical nodes
    share one row, and an OS or microcode update keeps it.  Predictions,
    comparisons, histories and baselines are per class."""

    __tablename__ = "node_class"

    id: Mapped[int] = mapped_column(primary_key=True)
    fingerprint: Mapped[str] = mapped_column(String(64), unique=True)
    architecture: Mapped[str] = mapped_column(String(64))
    cpu_model: Mapped[str] = mapped_column(String(255))
    sockets: Mapped[int] = mapped_column(Integer)
    cores: Mapped[int] = mapped_column(Integer)
    threads_per_core: Mapped[int] = mapped_column(Integer)
    numa_nodes: Mapped[int] = mapped_column(Integer)
    memory_bytes: Mapped[int] = mapped_column(BigInteger)  # rounded: node_class.round_memory
    caches: Mapped[list[Any]] = mapped_column(JSON)
    isa_features: Mapped[list[Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    hosts: Mapped[list[Machine]] = relationship(back_populates="node_class")


class Machine(Base):
    """One host: a node of a :class:`NodeClass`, by name (``hostname``: the Slurm
    node name, else the hostname).  ``fingerprint`` hashes the class and the
    name; the other columns keep the full description the host gave when it was
    first registered (its exact MemTotal and every cpuinfo flag), which the
    class leaves out.  ``Run.hostname`` is the computer's hostname, where the
    run's process lives."""

    __tablename__ = "machine"

    id: Mapped[int] = mapped_column(primary_key=True)
    fingerprint: Mapped[str] = mapped_column(String(64), unique=True)
    node_class_id: Mapped[int] = mapped_column(ForeignKey("node_class.id"), index=True)
    hostname: Mapped[str] = mapped_column(String(255))
    cpu_model: Mapped[str] = mapped_column(String(255))
    sockets: Mapped[int] = mapped_column(Integer)
    cores: Mapped[int] = mapped_column(Integer)
    threads_per_core: Mapped[int] = mapped_column(Integer)
    numa_nodes: Mapped[int] = mapped_column(Integer)
    memory_bytes: Mapped[int] = mapped_column(BigInteger)
    caches: Mapped[list[Any]] = mapped_column(JSON)
    isa_flags: Mapped[list[Any]] = mapped_column(JSON)
    os: Mapped[str] = mapped_column(String(255))
    info: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    runs: Mapped[list[Run]] = relationship(back_populates="machine")
    node_class: Mapped[NodeClass] = relationship(back_populates="hosts")


class Environment(Base):
    """Software that changes results (the DMI report saw 2.4x across compilers)."""

    __tablename__ = "environment"

    id: Mapped[int] = mapped_column(primary_key=True)
    fingerprint: Mapped[str] = mapped_column(String(64), unique=True)
    python: Mapped[str] = mapped_column(String(64))
    numpy: Mapped[str] = mapped_column(String(64))
    numba: Mapped[str] = mapped_column(String(64))
    llvmlite: Mapped[str] = mapped_column(String(64))
    threading_layer: Mapped[str] = mapped_column(String(64))
    benchdb_version: Mapped[str] = mapped_column(String(64))
    git_commit: Mapped[str | None] = mapped_column(String(64))
    info: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Run(Base):
    """One collection session; its points are committed one by one.

    ``uuid`` is the run's natural key across databases (``benchdb import`` matches
    runs by it; :func:`benchdb.db.runs.new_run_row` gives every run one).
    ``samples_pruned_at`` is set when ``benchdb db prune`` dropped the raw samples of
    its points, keeping their statistics.
    """

    __tablename__ = "run"
    # A host's runs newest first (benchdb.db.newest), migration 0012.
    __table_args__ = (Index("ix_run_machine_started", "machine_id", "started_at", "id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    uuid: Mapped[str] = mapped_column(String(64), unique=True, index=True)
    machine_id: Mapped[int] = mapped_column(ForeignKey("machine.id"), index=True)
    environment_id: Mapped[int] = mapped_column(ForeignKey("environment.id"), index=True)
    kind: Mapped[str] = mapped_column(String(32), default="kernels")
    status: Mapped[str] = mapped_column(String(16), default=RunStatus.RUNNING)
    command: Mapped[str] = mapped_column(Text, default="")
    tags: Mapped[list[Any]] = mapped_column(JSON, default=list)
    config: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    hostname: Mapped[str] = mapped_column(String(255), default="")
    pid: Mapped[int | None] = mapped_column(Integer)
    started_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), default=utcnow, index=True
    )
    ended_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    samples_pruned_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    machine: Mapped[Machine] = relationship(back_populates="runs")
    environment: Mapped[Environment] = relationship()
    measurements: Mapped[list[Measurement]] = relationship(back_populates="run")


class Kernel(Base):
    """A timed loop and its static metadata (paper 003, Table I), one row per version.

    ``version`` is a content hash of what sets the kernel's results: its
    counts and, for a user's kernel (``origin`` plugin or program), the hash of
    its code.  Changed code is a new row, so its points never mix with the old
    ones.  A user's kernel keeps its layout in ``info["layout"]``, from which the
    predictor computes footprints without the user's code.
    """

    __tablename__ = "kernel"
    __table_args__ = (UniqueConstraint("name", "version", name="uq_kernel_name_version"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(128), index=True)
    version: Mapped[str] = mapped_column(String(64))
    origin: Mapped[str] = mapped_column(String(16), default="builtin")
    family: Mapped[str] = mapped_column(String(64), index=True)
    ndim: Mapped[int] = mapped_column(Integer)
    flops_per_point: Mapped[float] = mapped_column(Float)
    loads_per_point: Mapped[float] = mapped_column(Float)
    stores_per_point: Mapped[float] = mapped_column(Float)
    arrays: Mapped[int] = mapped_column(Integer)
    footprint_version: Mapped[int] = mapped_column(Integer, default=1)
    description: Mapped[str] = mapped_column(Text, default="")
    info: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)


class Measurement(Base):
    """One measured point: a kernel at one shape, precision and thread count.

    ``samples`` holds every sample, each in seconds *per repetition*, of all
    ``passes`` (a sweep may measure each point in several passes, minutes apart:
    :data:`benchdb.collectors.plan.DEFAULT_PASSES`); the summary statistics are
    over all of them.  ``flop_rate`` and ``byte_rate`` derive
    from the median.  ``flags`` lists validity problems (e.g. ``noisy``).

    ``evidence`` runs beside ``samples``: what the operating system saw while each
    sample ran (wall and CPU time, run-queue delay, involuntary context switches,
    steal; :class:`benchdb.evidence.Evidence`), one list per field
    (:func:`benchdb.evidence.to_columns`), empty for rows collected before evidence
    was read.  ``set_aside`` holds the samples it showed disturbed the same way, with
    ``t_s`` (seconds per repetition) and ``pass`` (from 0): kept, never used by a
    statistic.  ``pass_counts``: how many of ``samples`` each pass holds, in order
    (empty for rows from before: their passes hold equal shares).
    """

    __tablename__ = "measurement"
    __table_args__ = (
        UniqueConstraint(
            "run_id",
            "kernel_id",
            "shape_key",
            "threads",
            "precision",
            "context",
            name="uq_measurement_point",
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("run.id", ondelete="CASCADE"), index=True)
    kernel_id: Mapped[int] = mapped_column(ForeignKey("kernel.id"), index=True)
    shape: Mapped[list[Any]] = mapped_column(JSON)
    shape_key: Mapped[str] = mapped_column(String(64))
    points: Mapped[int] = mapped_column(BigInteger)
    footprint_bytes: Mapped[int] = mapped_column(BigInteger, index=True)
    threads: Mapped[int] = mapped_column(Integer, default=1)
    placement: Mapped[str] = mapped_column(String(64), default="none")
    precision: Mapped[str] = mapped_column(String(16), default="float64")
    context: Mapped[str] = mapped_column(String(32), default="isolated")
    repetitions: Mapped[int] = mapped_column(Integer)
    samples: Mapped[list[Any]] = mapped_column(JSON)
    evidence: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict, server_default="{}")
    set_aside: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict, server_default="{}")
    pass_counts: Mapped[list[Any]] = mapped_column(JSON, default=list, server_default="[]")
    passes: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    t_min: Mapped[float] = mapped_column(Float)
    t_median: Mapped[float] = mapped_column(Float)
    t_iqr: Mapped[float] = mapped_column(Float)
    t_cv: Mapped[float] = mapped_column(Float)
    flop_rate: Mapped[float | None] = mapped_column(Float)
    byte_rate: Mapped[float | None] = mapped_column(Float)
    checksum: Mapped[float | None] = mapped_column(Float)
    valid: Mapped[bool] = mapped_column(Boolean, default=True)
    flags: Mapped[list[Any]] = mapped_column(JSON, default=list)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    run: Mapped[Run] = relationship(back_populates="measurements")
    kernel: Mapped[Kernel] = relationship()


class CommMeasurement(Base):
    """One point of an MPI communication benchmark (ping-pong, pairs, halo, allreduce).

    ``params_key`` is a canonical string of the benchmark's other parameters
    (decomposition, halo width, ...) so a point is unique per run.  ``samples``
    holds the clean samples, ``evidence`` what the operating system saw during each
    and ``set_aside`` the disturbed ones, as in :class:`Measurement` (empty for
    points measured before evidence was read).
    """

    __tablename__ = "comm_measurement"
    __table_args__ = (
        UniqueConstraint(
            "run_id",
            "benchmark",
            "ranks",
            "pairs",
            "placement",
            "message_bytes",
            "params_key",
            name="uq_comm_measurement_point",
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("run.id", ondelete="CASCADE"), index=True)
    benchmark: Mapped[str] = mapped_column(String(64), index=True)
    ranks: Mapped[int] = mapped_column(Integer)
    nodes: Mapped[int] = mapped_column(Integer, default=1)
    pairs: Mapped[int] = mapped_column(Integer, default=1)
    placement: Mapped[str] = mapped_column(String(32))
    message_bytes: Mapped[int] = mapped_column(BigInteger)
    params_key: Mapped[str] = mapped_column(String(255), default="")
    params: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    repetitions: Mapped[int] = mapped_column(Integer)
    samples: Mapped[list[Any]] = mapped_column(JSON)
    evidence: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict, server_default="{}")
    set_aside: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict, server_default="{}")
    t_min: Mapped[float] = mapped_column(Float)
    t_median: Mapped[float] = mapped_column(Float)
    t_iqr: Mapped[float] = mapped_column(Float)
    t_cv: Mapped[float] = mapped_column(Float)
    flags: Mapped[list[Any]] = mapped_column(JSON, default=list)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    run: Mapped[Run] = relationship()


class Model(Base):
    """A fitted predictor or communication model of a node class.

    ``data_hash`` is the sha256 of the canonical JSON of the data it was fitted
    on, so a model is re-fitted exactly when its data change, and one fit
    serves every selection of the same data (the class, or one host of it
    when only that host measured); ``selector`` records how that data was
    chosen.  ``machine_id`` is the host the data came from when it is one
    host's (``--host``, a communication run), else NULL.
    """

    __tablename__ = "model"
    __table_args__ = (
        UniqueConstraint("kind", "subject", "node_class_id", "data_hash", name="uq_model_fit"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(64), index=True)
    subject: Mapped[str] = mapped_column(String(255))
    node_class_id: Mapped[int] = mapped_column(ForeignKey("node_class.id"), index=True)
    machine_id: Mapped[int | None] = mapped_column(ForeignKey("machine.id"), index=True)
    environment_id: Mapped[int | None] = mapped_column(ForeignKey("environment.id"))
    params: Mapped[dict[str, Any]] = mapped_column(JSON)
    selector: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    data_hash: Mapped[str] = mapped_column(String(64))
    accuracy: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Baseline(Base):
    """The run pinned as the regression baseline of a node class.

    Per class, not per host: runs of one class are comparable, and a batch job
    lands on whichever node is free, so a per-host baseline would rarely be on
    the node the next run measured; the spread between nodes is part of the
    run-to-run noise that ``compare`` measures.
    """

    __tablename__ = "baseline"

    node_class_id: Mapped[int] = mapped_column(ForeignKey("node_class.id"), primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("run.id", ondelete="CASCADE"))
    set_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class BaselineChange(Base):
    """Each time a node class's baseline was pinned (``benchdb baseline set``), with the reason.

    Resetting the baseline accepts a new level -- an intended slowdown, a new
    compiler -- as the reference; Conbench users mark such a run as a
    "distribution change".  The reason is kept so that ``benchdb history``
    can say why a step was accepted.
    """

    __tablename__ = "baseline_change"

    id: Mapped[int] = mapped_column(primary_key=True)
    node_class_id: Mapped[int] = mapped_column(ForeignKey("node_class.id"), index=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("run.id", ondelete="CASCADE"))
    previous_run_id: Mapped[int | None] = mapped_column(ForeignKey("run.id", ondelete="SET NULL"))
    reason: Mapped[str | None] = mapped_column(Text)
    set_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class AppRun(Base):
    """One whole run of the distributed shallow-water model (``benchdb app run``).

    The measured side of the application model (paper 001 section 4, paper 003
    section I): a global ``grid`` split ``px`` x ``py`` over ``ranks`` MPI
    processes for ``steps`` time steps.  ``total_seconds`` is the slowest
    rank's time-stepping wall time; ``rank_seconds`` each rank's.
    ``loop_seconds`` and ``exchange_seconds`` hold, per rank (a list indexed by
    rank), a mapping from loop / exchanged field to seconds summed over the
    steps.  ``energy`` records package and DRAM joules where RAPL was readable
    (``{"source": "rapl", ...}``) or why not (``{"source": "none", ...}``).
    """

    __tablename__ = "app_run"

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("run.id", ondelete="CASCADE"), index=True)
    application: Mapped[str] = mapped_column(String(64), default="shallow")
    grid: Mapped[list[Any]] = mapped_column(JSON)
    grid_key: Mapped[str] = mapped_column(String(64))
    px: Mapped[int] = mapped_column(Integer)
    py: Mapped[int] = mapped_column(Integer)
    ranks: Mapped[int] = mapped_column(Integer)
    steps: Mapped[int] = mapped_column(Integer)
    precision: Mapped[str] = mapped_column(String(16), default="float64")
    threads: Mapped[int] = mapped_column(Integer, default=1)
    total_seconds: Mapped[float] = mapped_column(Float)
    rank_seconds: Mapped[list[Any]] = mapped_column(JSON)
    loop_seconds: Mapped[list[Any]] = mapped_column(JSON)
    exchange_seconds: Mapped[list[Any]] = mapped_column(JSON)
    energy: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    checksum: Mapped[float | None] = mapped_column(Float)
    info: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    run: Mapped[Run] = relationship()
