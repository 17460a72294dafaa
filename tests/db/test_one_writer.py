"""One constructor per run table: ``run`` rows are made in ``benchdb/db/runs.py`` only (which
records the command line redacted, the host, the process and the Slurm job), ``app_run``
rows in ``benchdb/db/app_runs.py`` only (the built-in model's and users' programs'
whole runs alike, their columns made by ``collectors/app/collect.app_run_values``).  Two
writers had drifted before: only one redacted the database URL."""

from __future__ import annotations

import ast
from pathlib import Path

import benchdb.collectors
import benchdb.kernels

import benchdb

WRITERS = {"Run": "db/runs.py", "AppRun": "db/app_runs.py"}
ROOTS = {
    Path(benchdb.__file__).parent: "",
    Path(benchdb.collectors.__file__).parent: "collectors/",
    Path(benchdb.kernels.__file__).parent: "kernels/",
}


def _constructions(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, class) of every call of a class in :data:`WRITERS`."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = (
                f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            )
            if name in WRITERS:
                found.append((node.lineno, name))
    return found


def _sources() -> dict[str, Path]:
    out = {}
    for root, prefix in ROOTS.items():
        for path in root.rglob("*.py"):
            rel = prefix + path.relative_to(root).as_posix()
            out.setdefault(rel, path)
    return out


def test_run_rows_have_one_constructor_each() -> None:
    sources = _sources()
    assert set(WRITERS.values()) <= set(sources)
    offenders = [
        f"{rel}:{line} constructs {name}"
        for rel, path in sorted(sources.items())
        for line, name in _constructions(ast.parse(path.read_text()))
        if WRITERS[name] != rel
    ]
    assert not offenders, "\n".join(offenders)


def test_the_check_sees_a_construction() -> None:
    tree = ast.parse("from x import models\nr = Run(command='a')\na = models.AppRun(run_id=1)\n")
    assert _constructions(tree) == [(2, "Run"), (3, "AppRun")]
