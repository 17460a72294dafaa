"""One table of a spec file, read field by field, each error naming the file and the table.

Shared by the program spec (:mod:`.spec`) and its ``[parallel]`` section
(:mod:`.parallel_spec`): a field of the wrong type, a missing one or an unknown
one (a typo must not silently fall back to a default) is one
:class:`~.api.KernelError` that names the fix.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, NoReturn

from .api import KernelError


class SpecTable:
    """Reads one TOML table, naming it in every error."""

    def __init__(self, path: Path, where: str, table: Any, allowed: set[str]) -> None:
        self.path, self.where = path, where
        if not isinstance(table, Mapping):
            self.fail(f"{where} must be a table")
        unknown = sorted(set(table) - allowed)
        if unknown:
            self.fail(
                f"{where} has unknown field(s) {', '.join(unknown)}; "
                f"the fields are {', '.join(sorted(allowed))}"
            )
        self.table = table

    def fail(self, message: str) -> NoReturn:
        raise KernelError(f"spec {self.path}: {message}")

    def get(
        self, key: str, kind: type | tuple[type, ...], default: Any = ..., what: str = ""
    ) -> Any:
        if key not in self.table:
            if default is ...:
                self.fail(f"{self.where} lacks {key!r}; {what or 'add it'}")
            return default
        value = self.table[key]
        if isinstance(value, bool) or not isinstance(value, kind):
            self.fail(f"{self.where} {key} = {value!r} has the wrong type; {what or 'fix it'}")
        return value

    def number(self, key: str, what: str) -> float:
        value = self.get(key, (int, float), what=what)
        if value < 0:
            self.fail(f"{self.where} {key} = {value!r} must not be negative; {what}")
        return float(value)
