"""Fitted curves kept in the ``model`` table, keyed by a content hash of their data.

A fit is stored with ``kind`` ``predictor.<method>`` (or ``baseline.<name>``),
``subject`` ``kernel/t<threads>/<precision>/<context>``, the node class (and
the host, under ``--host``) and environment, the ``selector`` that chose its
measurements and ``data_hash`` =
sha256 of the canonical JSON of the curve it was fitted on (plus the method's
version).  The same data give the same hash, so the stored fit is reused; new
or changed measurements give a new hash and a fresh fit (the old row stays, as
history).  Two processes fitting at once both insert; the unique constraint
keeps one and :func:`benchdb.db.repo.get_or_create` reads it back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import select

from ..hashing import content_hash
from .engine import Database
from .models import Model
from .repo import get_or_create
from .scope import Scope

FIT_VERSION = 2
"""Bump when a method's fitting, or what a fit stores, changes: stored fits of the same
data are then redone (2: the leave-one-out errors, ``loo_rel``)."""


def cached_fit(
    db: Database,
    *,
    kind: str,
    subject: str,
    scope: Scope,
    environment_id: int | None,
    data: Any,
    selector: dict[str, Any],
    fit: Callable[[], dict[str, Any]],
) -> tuple[dict[str, Any], int, bool]:
    """``(params, model id, reused)``: the stored fit of ``data``, or ``fit()`` stored now.

    Looked up by node class and data: the same points pooled over the class or
    narrowed to the one host that measured them are one fit.
    """
    data_hash = content_hash({"fit_version": FIT_VERSION, "kind": kind, "data": data})
    lookup = {
        "kind": kind,
        "subject": subject,
        "node_class_id": scope.node_class_id,
        "data_hash": data_hash,
    }
    with db.session() as s:
        row = s.scalars(select(Model).filter_by(**lookup)).first()
        if row is not None:
            return dict(row.params), row.id, True
    params = fit()
    with db.session() as s:
        row = get_or_create(
            s,
            Model,
            lookup,
            machine_id=scope.host_id,
            environment_id=environment_id,
            params=params,
            selector=selector,
        )
        s.flush()
        return dict(row.params), row.id, False
