"""The interpolation methods, one module each (like Kerncraft's ``models/``).

A method module provides ``NAME``, ``MIN_POINTS``, ``SUMMARY``,
``fit(u, y) -> params`` (``u`` the natural log of the footprints, sorted;
``y`` the rates; ``params`` JSON-able, with ``fit_rms_rel``) and
``evaluate(params, u) -> y``.  Add a method by adding a module and listing it
in :data:`METHODS`.
"""

from __future__ import annotations

from types import ModuleType

from ...errors import UserError
from . import linear, logcurve, pchip

METHODS: dict[str, ModuleType] = {m.NAME: m for m in (linear, pchip, logcurve)}
DEFAULT_METHOD = "pchip"


def get_method(name: str) -> ModuleType:
    """The method module called ``name``; :class:`UserError` listing the valid ones."""
    try:
        return METHODS[name]
    except KeyError:
        raise UserError(f"unknown method {name!r}; use one of: {', '.join(METHODS)}") from None
