"""What a source file of the project imports, relative imports resolved to absolute names:
the layering tests read the import graph from the source, without importing anything."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# folders that install under ``benchdb`` (pyproject.toml's package-dir)
INSTALLED_AS = {"kernels": "benchdb.kernels", "collectors": "benchdb.collectors",
                "migrations": "benchdb.migrations"}  # fmt: skip


def module_name(path: Path) -> str:
    """The import name of the project file ``path`` (``kernels/api.py``: benchdb.kernels.api)."""
    parts = list(path.resolve().relative_to(ROOT).with_suffix("").parts)
    if parts[0] in INSTALLED_AS:
        parts[:1] = INSTALLED_AS[parts[0]].split(".")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(tree: ast.AST, package: str) -> list[tuple[int, str]]:
    """(line, absolute name) of every import in ``tree``, a module of ``package``; a
    ``from M import x`` gives both ``M`` and ``M.x`` (x may be a module or a name)."""
    out = []
    here = package.split(".")
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = here[: len(here) - node.level + 1] if node.level else []
            name = ".".join([*base, node.module] if node.module else base)
            out += [(node.lineno, name)]
            out += [(node.lineno, f"{name}.{alias.name}") for alias in node.names]
    return out


def file_imports(path: Path) -> set[str]:
    """The absolute names project file ``path`` imports."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    return {m for _, m in imported_modules(ast.parse(path.read_text()), package)}
