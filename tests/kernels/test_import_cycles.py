"""The kernels package imports in one direction: no module imports, even for type hints
only, a module that imports it back (the contract in api.py sits on top of geometry.py
and layout.py, which share basics.py)."""

from __future__ import annotations

from pathlib import Path

from tests.imports import ROOT, file_imports, module_name


def _graph(folder: Path) -> dict[str, set[str]]:
    """Module -> the package's modules it imports.  ``from . import x`` names the package
    itself too, which every submodule's import runs through: that edge is left out."""
    modules = {module_name(p): p for p in folder.rglob("*.py")}
    package = module_name(folder / "__init__.py")
    return {
        name: {m for m in file_imports(path) if m in modules and m not in (name, package)}
        for name, path in modules.items()
    }


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph``, as the modules along it; None if there is none."""
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)):
            return found
    return None


def test_the_kernels_package_has_no_import_cycle() -> None:
    assert _cycle(_graph(ROOT / "kernels")) is None


def test_the_check_sees_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
