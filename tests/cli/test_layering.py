"""The CLI only parses, calls the Python API and prints: no module under benchdb/cli/ imports
the ORM models or SQLAlchemy, or opens a session of its own.  Queries live in the data layer
(benchdb/db/, benchdb/query.py, the store modules), where every caller shares them."""

from __future__ import annotations

import ast
from pathlib import Path

import benchdb.cli

CLI = Path(benchdb.cli.__file__).parent
FORBIDDEN_MODULES = ("sqlalchemy", "benchdb.db.models")


def _imported_modules(tree: ast.AST) -> list[tuple[int, str]]:
    """Absolute names of what a module under benchdb/cli imports (relative ones resolved)."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ["benchdb", "cli"][: max(0, 2 - node.level + 1)] if node.level else []
            name = ".".join([*base, node.module] if node.module else base)
            out += [(node.lineno, name)]
            out += [(node.lineno, f"{name}.{alias.name}") for alias in node.names]
    return out


def _session_calls(tree: ast.AST) -> list[int]:
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("session", "execute", "scalars", "scalar")
    ]


def test_no_cli_module_imports_the_orm_or_queries_the_database() -> None:
    offenders = []
    for path in sorted(CLI.glob("*.py")):
        tree = ast.parse(path.read_text())
        for line, name in _imported_modules(tree):
            if any(name == m or name.startswith(m + ".") for m in FORBIDDEN_MODULES):
                offenders.append(f"{path.name}:{line} imports {name}")
        offenders += [f"{path.name}:{line} queries the database" for line in _session_calls(tree)]
    assert not offenders, "\n".join(offenders)


def test_the_check_sees_a_forbidden_import_and_a_session() -> None:
    tree = ast.parse(
        "from ..db.models import Kernel\nimport sqlalchemy\n"
        "def f(db):\n    with db.session() as s:\n        return s.scalars(1)\n"
    )
    names = [name for _, name in _imported_modules(tree)]
    assert "benchdb.db.models" in names and "sqlalchemy" in names
    assert len(_session_calls(tree)) == 2
