"""A project's benchdb settings: ``benchdb.toml``, or ``[tool.benchdb]`` in ``pyproject.toml``.

Where it is looked for (the first found wins, as ruff and pytest look for theirs):

1. the file given with ``--config PATH`` (a ``benchdb.toml`` or a ``pyproject.toml``);
2. else the current directory, then each parent directory up to the root: in
   each, ``benchdb.toml`` if it exists, else ``pyproject.toml`` if it has a
   ``[tool.benchdb]`` table.

Only the ``[compare]`` table is defined today (``[tool.benchdb.compare]`` in
``pyproject.toml``)::

    [compare]
    threshold = 5            # percent: smallest change reported (default 5)
    alpha = 0.01             # significance level; intervals at 1 - alpha

    [compare.thresholds]     # percent, per kernel: exact names or shell patterns
    "shallow.step" = 10      # quote names with dots (TOML would nest them)
    "stream.*" = 8

A ``benchdb.toml`` may be a program spec at the same time (docs/programs.md:
``format``, ``[program]``, ``[shape]``...): those tables are the spec's and
ignored here, so one file can describe a project's program and its CI
settings.  Anything else is an error naming the fix: a typo must not
silently fall back to a default.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import UserError

CONFIG_NAME = "benchdb.toml"
PYPROJECT = "pyproject.toml"
SPEC_TABLES = frozenset({"format", "program", "shape", "footprint", "loops"})
"""Top-level keys of a program spec (kernels/spec.py), which a benchdb.toml may also hold."""
SECTIONS = frozenset({"compare"})
COMPARE_KEYS = frozenset({"threshold", "alpha", "thresholds"})
MAX_PERCENT = 1000.0


@dataclass(frozen=True)
class CompareSettings:
    """``[compare]``: thresholds as fractions (the file says percent), None where unset."""

    threshold: float | None = None
    alpha: float | None = None
    thresholds: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class ProjectConfig:
    """The settings read from ``path`` (None: no file found, every setting at its default)."""

    path: Path | None = None
    compare: CompareSettings = field(default_factory=CompareSettings)


def find_config(start: Path) -> Path | None:
    """The config file that applies in ``start`` (see the module docstring), or None."""
    for folder in [start, *start.parents]:
        own = folder / CONFIG_NAME
        if own.is_file():
            return own
        pyproject = folder / PYPROJECT
        if pyproject.is_file() and "benchdb" in _read(pyproject).get("tool", {}):
            return pyproject
    return None


def _read(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read config file {path}: {exc}; fix it or pass --config") from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path} is not valid TOML ({exc}); fix the file") from None


def _percent(path: Path, where: str, value: Any) -> float:
    """A threshold in percent, checked, as a fraction."""
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or not 0 < value < MAX_PERCENT:
        hint = ""
        if isinstance(value, dict):
            hint = ' (quote kernel names that contain dots: "shallow.cu" = 10)'
        raise UserError(
            f"{path}: {where} = {value!r} is not a percentage above 0 and below "
            f"{MAX_PERCENT:g}{hint}; fix the file"
        )
    return float(value) / 100


def _compare(path: Path, prefix: str, table: Any) -> CompareSettings:
    if not isinstance(table, dict):
        raise UserError(f"{path}: {prefix} must be a table ([{prefix}]); fix the file")
    unknown = sorted(set(table) - COMPARE_KEYS)
    if unknown:
        raise UserError(
            f"{path}: [{prefix}] has unknown key(s) {', '.join(unknown)}; "
            f"the keys are {', '.join(sorted(COMPARE_KEYS))}"
        )
    threshold = table.get("threshold")
    alpha = table.get("alpha")
    if alpha is not None and (
        not isinstance(alpha, float | int) or isinstance(alpha, bool) or not 0 < alpha < 1
    ):
        raise UserError(
            f"{path}: {prefix}.alpha = {alpha!r} is not a probability between 0 and 1 "
            "(e.g. 0.01); fix the file"
        )
    per_kernel = table.get("thresholds", {})
    if not isinstance(per_kernel, dict):
        raise UserError(
            f'{path}: {prefix}.thresholds must be a table of kernel = percent ("shallow.cu" = '
            "10); fix the file"
        )
    return CompareSettings(
        threshold=None if threshold is None else _percent(path, f"{prefix}.threshold", threshold),
        alpha=None if alpha is None else float(alpha),
        thresholds={
            name: _percent(path, f'{prefix}.thresholds."{name}"', value)
            for name, value in per_kernel.items()
        },
    )


def load_config(path: Path) -> ProjectConfig:
    """Parse and check ``path``; ``UserError`` (one line, naming the fix) on any problem."""
    doc = _read(path)
    if path.name == PYPROJECT:
        section = doc.get("tool", {}).get("benchdb")
        if section is None:
            raise UserError(f"{path} has no [tool.benchdb] table; add one or name a benchdb.toml")
        prefix, allowed = "tool.benchdb", SECTIONS
    else:
        section, prefix, allowed = doc, "", SECTIONS | SPEC_TABLES
    if not isinstance(section, dict):
        raise UserError(f"{path}: {prefix} must be a table; fix the file")
    unknown = sorted(set(section) - allowed)
    if unknown:
        where = f"[{prefix}]" if prefix else "the top level"
        raise UserError(
            f"{path}: {where} has unknown key(s) {', '.join(unknown)}; "
            f"the settings are {', '.join(sorted(SECTIONS))}"
        )
    compare_prefix = f"{prefix}.compare" if prefix else "compare"
    compare = section.get("compare")
    return ProjectConfig(
        path=path,
        compare=CompareSettings() if compare is None else _compare(path, compare_prefix, compare),
    )


def project_config(explicit: Path | None = None, start: Path | None = None) -> ProjectConfig:
    """The config of ``--config PATH``, else the one found from ``start`` (the working
    directory), else the defaults."""
    if explicit is not None:
        if not explicit.is_file():
            raise UserError(f"config file {explicit} does not exist; give an existing file")
        return load_config(explicit)
    found = find_config(start if start is not None else Path.cwd())
    return load_config(found) if found is not None else ProjectConfig()
