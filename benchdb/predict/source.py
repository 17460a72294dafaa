"""Choosing the measured points a prediction rests on.

They are read by :func:`benchdb.db.measurements.machine_rows`, a narrow projection of the
columns :func:`~benchdb.db.measurements.measurements_frame` returns (same joins, same
meaning), built without pandas: ``benchdb predict``
must answer from a cold start in under a second, and importing pandas alone
costs about half of that on the reference machine.  Analyses that want a
DataFrame (``benchdb validate``, plots, notebooks) use ``measurements_frame``.

Which data (docs/design.md "Models"): one node class -- all its hosts, or the
one of ``--host`` (:mod:`benchdb.db.scope`) -- one environment, one kernel
version, thread count, precision and timing context.  By default the kernel
version is the newest one measured on the class (a user's changed code is
a new version, never mixed with the old), the environment the newest one
that measured it (a numba upgrade changes results, DMI report: 2.4x across
compilers); the context is
``fullstep`` where the kernel was timed inside the shallow-water step (paper
003 §V: that is the context the real model runs in), else ``isolated``.
Invalid measurements (failed checksum, non-positive time) are left out and
counted; noisy ones are kept and flagged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..db.engine import Database
from ..db.measurements import machine_rows, newest_point
from ..db.scope import Scope, read_scope
from ..errors import UserError
from .basis import benchmark_of

CONTEXT_PREFERENCE = ("fullstep", "isolated")


@dataclass(frozen=True)
class MachineCaches:
    """The node class (or host) a prediction is for, with its data-cache capacities
    (smallest first)."""

    scope: Scope
    caches: tuple[tuple[str, int], ...]  # (name, size_bytes) of data caches by level

    @classmethod
    def of(cls, scope: Scope) -> MachineCaches:
        data = sorted(
            (c for c in scope.caches if c.get("type") != "Instruction"),
            key=lambda c: int(c.get("level", 0)),
        )
        return cls(scope, tuple((str(c["name"]), int(c["size_bytes"])) for c in data))

    def level_capacities(self) -> list[tuple[str, float]]:
        """(name, capacity bytes) of each data cache, then ("memory", inf)."""
        return [*((n, float(c)) for n, c in self.caches), ("memory", float("inf"))]

    def level_of(self, footprint: Any) -> Any:
        """Index into :meth:`level_capacities` of the smallest level holding ``footprint``."""
        import numpy as np

        caps = np.array([float(c) for _, c in self.caches])
        return np.searchsorted(caps, np.asarray(footprint, dtype=float), side="left")


@dataclass(frozen=True)
class Selection:
    """The measurements one curve is built from, and how they were chosen."""

    machine: MachineCaches
    environment_id: int
    kernel: str
    threads: int
    precision: str
    context: str
    rows: tuple[dict[str, Any], ...]
    invalid: int = 0
    other_threads: tuple[int, ...] = field(default=())
    kernel_version: str | None = None

    @property
    def subject(self) -> str:
        """The Model table's subject for fits of this data."""
        return f"{self.kernel}/t{self.threads}/{self.precision}/{self.context}"

    def selector(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel,
            "threads": self.threads,
            "precision": self.precision,
            "context": self.context,
            "environment_id": self.environment_id,
            "kernel_version": self.kernel_version,
            "run_ids": sorted({int(r["run_id"]) for r in self.rows}),
        }


def resolve_machine_caches(
    db: Database, machine: str | None, host: str | None = None
) -> MachineCaches:
    """The node class of ``--machine`` (or this machine's), or the one ``--host``."""
    return MachineCaches.of(read_scope(db, machine, host))


def _newest(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    return max(rows, key=lambda r: (r["run_started_at"], r["run_id"]))


def newest_environment(rows: Sequence[dict[str, Any]]) -> int:
    """The environment of the most recently started run among ``rows``."""
    return int(_newest(rows)["environment_id"])


def select_rows(
    rows: Sequence[dict[str, Any]],
    machine: MachineCaches,
    kernel: str,
    *,
    threads: int,
    precision: str,
    environment_id: int | None = None,
    context: str | None = None,
    kernel_version: str | None = None,
) -> Selection:
    """Narrow ``rows`` to one curve's data; :class:`UserError` naming the fix if empty."""
    mine = [r for r in rows if r["kernel"] == kernel and r["precision"] == precision]
    if not mine:
        raise UserError(
            f"no {precision} measurements of {kernel} on {machine.scope.label} "
            f"in the selected runs; run `benchdb collect --kernels {benchmark_of(kernel)}` first"
        )
    if kernel_version is None:
        kernel_version = _newest(mine)["kernel_version"]
    mine = [r for r in mine if r["kernel_version"] == kernel_version]
    if not mine:
        raise UserError(f"no measurements of {kernel} version {kernel_version[:12]} here")
    if context is not None:  # the newest environment *that timed this context*
        in_context = [r for r in mine if r["context"] == context]
        if not in_context:
            raise UserError(
                f"{kernel} was not timed in context {context!r}; "
                f"measured: {', '.join(sorted({r['context'] for r in mine}))}"
            )
        mine = in_context
    if environment_id is None:
        environment_id = newest_environment(mine)
    envs = sorted({int(r["environment_id"]) for r in mine})
    mine = [r for r in mine if r["environment_id"] == environment_id]
    if not mine:
        raise UserError(
            f"environment {environment_id} has no measurements of {kernel}; "
            f"environments with data: {', '.join(map(str, envs))}"
        )
    if context is None:
        contexts = {r["context"] for r in mine}
        context = next((c for c in CONTEXT_PREFERENCE if c in contexts), sorted(contexts)[0])
    mine = [r for r in mine if r["context"] == context]
    measured_threads = sorted({int(r["threads"]) for r in mine})
    if threads not in measured_threads:
        raise UserError(
            f"{kernel} was not measured with {threads} thread(s) on {machine.scope.label}; "
            f"measured thread counts: {', '.join(map(str, measured_threads))} (or collect with "
            f"`benchdb collect --kernels {benchmark_of(kernel)} --threads {threads}`)"
        )
    chosen = [r for r in mine if r["threads"] == threads]
    valid = tuple(r for r in chosen if r["valid"])
    return Selection(
        machine=machine,
        environment_id=environment_id,
        kernel=kernel,
        threads=threads,
        precision=precision,
        context=context,
        rows=valid,
        invalid=len(chosen) - len(valid),
        other_threads=tuple(t for t in measured_threads if t != threads),
        kernel_version=kernel_version,
    )


def read_selection(
    db: Database,
    machine: MachineCaches,
    kernel: str,
    *,
    threads: int,
    precision: str,
    environment_id: int | None = None,
    context: str | None = None,
) -> Selection:
    """:func:`select_rows` over the class's measurements of ``kernel``, reading only the
    environment it chooses: the newest run's of the newest kernel version (in
    ``context``; :func:`newest_point`) unless ``environment_id`` names one.  A year of
    CI history holds a kernel's points in thousands of runs; one environment's are what
    a prediction rests on.  Where that environment holds none, every row is read, so
    that the error names what exists."""
    newest = newest_point(db, machine.scope, kernel, precision=precision)
    version = None if newest is None else newest[0]
    if environment_id is None and newest is not None:
        environment_id = newest[1]
        if context is not None:
            found = newest_point(
                db, machine.scope, kernel, precision=precision, context=context, version=version
            )
            environment_id = None if found is None else found[1]
    rows: list[dict[str, Any]] = []
    if environment_id is not None:
        rows = machine_rows(
            db, machine.scope, kernels=[kernel], precision=precision, environment_id=environment_id
        )
    if not rows:
        rows = machine_rows(db, machine.scope, kernels=[kernel], precision=precision)
    return select_rows(
        rows,
        machine,
        kernel,
        threads=threads,
        precision=precision,
        environment_id=environment_id,
        context=context,
        kernel_version=version,
    )
