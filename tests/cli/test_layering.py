"""The CLI only parses, calls the Python API and prints: no module under benchdb/cli/ imports
the ORM models or SQLAlchemy, or opens a session of its own.  Queries live in the data layer
(benchdb/db/), where every caller shares them."""

from __future__ import annotations

import ast
from pathlib import Path

import benchdb.cli
from tests.imports import imported_modules

CLI = Path(benchdb.cli.__file__).parent
FORBIDDEN_MODULES = ("sqlalchemy", "benchdb.db.models")


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
        for line, name in imported_modules(tree, "benchdb.cli"):
            if any(name == m or name.startswith(m + ".") for m in FORBIDDEN_MODULES):
                offenders.append(f"{path.name}:{line} imports {name}")
        offenders += [f"{path.name}:{line} queries the database" for line in _session_calls(tree)]
    assert not offenders, "\n".join(offenders)


def test_the_check_sees_a_forbidden_import_and_a_session() -> None:
    tree = ast.parse(
        "from ..db.models import Kernel\nimport sqlalchemy\n"
        "def f(db):\n    with db.session() as s:\n        return s.scalars(1)\n"
    )
    names = [name for _, name in imported_modules(tree, "benchdb.cli")]
    assert "benchdb.db.models" in names and "sqlalchemy" in names
    assert len(_session_calls(tree)) == 2
