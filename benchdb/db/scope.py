"""Which data a command reads: every host of a node class, or one host (``--host``).

Identical nodes, and one node before and after an OS update, are one node
class (:mod:`benchdb.node_class`); their points pool, which is what a user of
a cluster wants from ``predict``, ``validate``, ``compare``, ``history`` and
``scenario``.  ``--machine`` names the class -- by id, by the name of any of
its hosts, or by a fingerprint prefix -- and ``--host`` narrows the data to one
host (by name, id or fingerprint prefix), e.g. to see whether one node is
slower than its class.  Without either, the class of the machine the command
runs on: a node that never collected answers from the points of its identical
neighbours.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, func, or_, select
from sqlalchemy.orm import Session

from ..errors import UserError
from ..machine import detect_machine
from .engine import Database
from .models import Machine, NodeClass, Run

LISTED = 8  # known classes or hosts named in an error message
MIN_PREFIX = 6  # hex digits a fingerprint prefix needs (shorter text is a name or an id)


@dataclass(frozen=True)
class Scope:
    """A node class and the hosts of it whose runs count (all, or the one of ``--host``)."""

    node_class_id: int
    class_fingerprint: str
    cpu_model: str
    cores: int
    caches: tuple[dict[str, Any], ...]
    host_ids: tuple[int, ...]
    hostnames: tuple[str, ...]
    host: str | None = None

    @property
    def host_id(self) -> int | None:
        """The host of ``--host``; None when the scope pools the class."""
        return self.host_ids[0] if self.host is not None else None

    def runs(self) -> ColumnElement[bool]:
        """The condition on :class:`Run` rows that selects this scope's runs."""
        return Run.machine_id.in_(self.host_ids)

    @property
    def label(self) -> str:
        """How messages name it: ``host node07 (node class 3)`` or ``node class 3 (...)``."""
        if self.host is not None:
            return f"host {self.host} (node class {self.node_class_id})"
        return f"node class {self.node_class_id} ({_hosts_text(self.hostnames)})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "node_class_id": self.node_class_id,
            "node_class": self.class_fingerprint,
            "cpu_model": self.cpu_model,
            "host": self.host,
            "host_id": self.host_id,
            "host_count": len(self.host_ids),
        }


def _hosts_text(names: Sequence[str]) -> str:
    shown = ", ".join(names[:LISTED])
    more = f" and {len(names) - LISTED} more" if len(names) > LISTED else ""
    return f"host{'s' if len(names) != 1 else ''} {shown}{more}"


def _scope(node_class: NodeClass, hosts: Sequence[Machine], host: str | None = None) -> Scope:
    return Scope(
        node_class_id=node_class.id,
        class_fingerprint=node_class.fingerprint,
        cpu_model=node_class.cpu_model,
        cores=node_class.cores,
        caches=tuple(dict(c) for c in node_class.caches),
        host_ids=tuple(h.id for h in hosts),
        hostnames=tuple(h.hostname for h in hosts),
        host=host,
    )


def _known_classes(session: Session) -> str:
    rows = session.scalars(select(NodeClass).order_by(NodeClass.id).limit(LISTED)).all()
    if not rows:
        return "the database holds no machine yet; run `benchdb collect` first"
    listed = "; ".join(
        f"{c.id}: {c.cpu_model}, {_hosts_text([h.hostname for h in c.hosts])}" for c in rows
    )
    return f"known node classes: {listed} (`benchdb machine list` shows them all)"


def _is_prefix(text: str) -> bool:
    """Whether ``text`` may be a fingerprint prefix: hex, long enough not to be a name."""
    return len(text) >= MIN_PREFIX and all(c in "0123456789abcdef" for c in text.lower())


def _class_named(session: Session, text: str) -> NodeClass:
    """A node class by id, by the name of one of its hosts, or by a fingerprint prefix
    (of the class or of one of its hosts), tried in that order."""
    rows: list[NodeClass] = []
    if text.isdigit() and (row := session.get(NodeClass, int(text))) is not None:
        rows = [row]
    if not rows:
        by_name = select(Machine.node_class_id).where(Machine.hostname == text)
        rows = list(session.scalars(select(NodeClass).where(NodeClass.id.in_(by_name))))
    if not rows and _is_prefix(text):
        prefix = text.lower()
        by_host = select(Machine.node_class_id).where(Machine.fingerprint.startswith(prefix))
        rows = list(
            session.scalars(
                select(NodeClass).where(
                    or_(NodeClass.fingerprint.startswith(prefix), NodeClass.id.in_(by_host))
                )
            )
        )
    if len(rows) != 1:
        what = "no node class matches" if not rows else "several node classes match"
        raise UserError(f"{what} --machine {text!r}; {_known_classes(session)}")
    return rows[0]


def _host_named(session: Session, text: str, node_class: NodeClass | None) -> Machine:
    """A host by name, else by id, else by fingerprint prefix (within ``node_class``)."""
    stmt = select(Machine).order_by(Machine.id)
    if node_class is not None:
        stmt = stmt.where(Machine.node_class_id == node_class.id)
    rows = list(session.scalars(stmt.where(Machine.hostname == text)))
    if not rows and text.isdigit():
        rows = list(session.scalars(stmt.where(Machine.id == int(text))))
    if not rows and _is_prefix(text):
        rows = list(session.scalars(stmt.where(Machine.fingerprint.startswith(text.lower()))))
    if len(rows) == 1:
        return rows[0]
    if rows:
        classes = ", ".join(str(r.node_class_id) for r in rows)
        raise UserError(
            f"host {text!r} is in node classes {classes} (its hardware changed); "
            "choose one with --machine CLASS"
        )
    where = f" in node class {node_class.id}" if node_class is not None else ""
    pool = select(Machine.hostname).order_by(Machine.id).limit(LISTED)
    if node_class is not None:
        pool = pool.where(Machine.node_class_id == node_class.id)
    names = list(session.scalars(pool))
    known = f"known hosts{where}: {', '.join(names)}" if names else "no host is known yet"
    raise UserError(f"no host {text!r}{where}; {known} (`benchdb machine list` shows them all)")


def _this_class(session: Session) -> NodeClass:
    fingerprint = detect_machine().node_class.fingerprint
    row = session.scalars(select(NodeClass).where(NodeClass.fingerprint == fingerprint)).first()
    if row is None:
        raise UserError(
            "this machine's node class has no data in the database; run `benchdb collect` "
            f"first, or name a class with --machine ID|HOST; {_known_classes(session)}"
        )
    return row


def resolve_scope(session: Session, machine: str | None = None, host: str | None = None) -> Scope:
    """The scope of ``--machine`` (a node class) and ``--host`` (one host of it).

    Without ``machine`` the class is the host's, else this machine's.
    :class:`UserError` naming the fix when nothing, or more than one, matches.
    """
    node_class = _class_named(session, machine) if machine is not None else None
    if host is not None:
        row = _host_named(session, host, node_class)
        return _scope(row.node_class, [row], host=row.hostname)
    if node_class is None:
        node_class = _this_class(session)
    hosts = session.scalars(
        select(Machine).where(Machine.node_class_id == node_class.id).order_by(Machine.id)
    ).all()
    return _scope(node_class, hosts)


def read_scope(db: Database, machine: str | None = None, host: str | None = None) -> Scope:
    """:func:`resolve_scope` in a transaction of its own, which only reads."""
    with db.reading() as s:
        return resolve_scope(s, machine, host)


def scope_of_run(session: Session, run: Run, host: str | None = None) -> Scope:
    """The node class of ``run`` (narrowed to ``host`` when given)."""
    return resolve_scope(session, str(run.machine.node_class_id), host)


def node_classes(db: Database) -> list[dict[str, Any]]:
    """Every node class with its hosts and how many runs each measured (``machine list``)."""
    with db.reading() as s:
        return _node_classes(s)


def _node_classes(session: Session) -> list[dict[str, Any]]:
    runs = dict(
        session.execute(select(Run.machine_id, func.count()).group_by(Run.machine_id)).all()
    )
    out = []
    for c in session.scalars(select(NodeClass).order_by(NodeClass.id)):
        hosts = sorted(c.hosts, key=lambda h: h.id)
        out.append(
            {
                "node_class_id": c.id,
                "fingerprint": c.fingerprint,
                "architecture": c.architecture,
                "cpu_model": c.cpu_model,
                "sockets": c.sockets,
                "cores": c.cores,
                "threads_per_core": c.threads_per_core,
                "numa_nodes": c.numa_nodes,
                "memory_bytes": c.memory_bytes,
                "caches": list(c.caches),
                "isa_features": list(c.isa_features),
                "hosts": [
                    {"host_id": h.id, "host": h.hostname, "runs": runs.get(h.id, 0)} for h in hosts
                ],
            }
        )
    return out
