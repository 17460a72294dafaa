"""One registry per kind of plug-in, all of one style.

The predictor's interpolation methods (:mod:`benchdb.predict.methods`), its
analytic baselines (:mod:`benchdb.predict.baselines`) and the regression
tracker's change-point detectors (:mod:`benchdb.regress.detectors`) are
chosen by name on the command line.  Each kind defines what an entry is (a
``Protocol``: ``methods/method.py``, ``baselines/baseline_model.py``,
``detectors/detector.py``) and one :class:`Registry`; the module
that defines an entry registers it there, as Extra-P's modelers register
themselves, and the kind's package imports its modules in the order their
names are listed.  Adding an entry is adding a module.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Generic, Protocol, TypeVar

from .errors import UserError


class Named(Protocol):
    """What every entry has: the name the command line chooses it by."""

    @property
    def name(self) -> str: ...


T = TypeVar("T", bound=Named)


class Registry(Generic[T]):
    """The entries of one kind of plug-in by name, in the order they were registered."""

    def __init__(self, kind: str) -> None:
        self.kind = kind  # what an error calls an entry: "method", "detector"
        self._entries: dict[str, T] = {}

    def register(self, entry: T) -> T:
        """Add ``entry`` under its ``name``; a name is taken once (``ValueError``: a
        second module claiming it is a bug, not a user's mistake)."""
        if entry.name in self._entries:
            raise ValueError(f"{self.kind} {entry.name!r} is registered twice")
        self._entries[entry.name] = entry
        return entry

    def get(self, name: str) -> T:
        """The entry called ``name``; :class:`UserError` listing the known names."""
        try:
            return self._entries[name]
        except KeyError:
            raise _unknown(self.kind, name, self.names()) from None

    def names(self) -> list[str]:
        return list(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries


def check_names(names: Iterable[str], *registries: Registry[Any]) -> None:
    """:class:`UserError` for the first of ``names`` that none of ``registries`` holds,
    listing all their names (one option may choose among several kinds: ``benchdb
    validate --method`` takes methods and baselines); the first registry's kind names
    the error."""
    known = [n for r in registries for n in r.names()]
    for name in names:
        if name not in known:
            raise _unknown(registries[0].kind, name, known)


def _unknown(kind: str, name: str, known: list[str]) -> UserError:
    return UserError(f"unknown {kind} {name!r}; use one of: {', '.join(known)}")
