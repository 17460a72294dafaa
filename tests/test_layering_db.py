"""The ORM entities stay behind the data layer: no module of benchdb outside benchdb/db/,
of the collectors or of the kernels imports :mod:`benchdb.db.models` or an entity from
``benchdb.db``.  Queries live in benchdb/db/ and hand out plain values (dataclasses, dicts,
enums), so a change of the schema touches one package (docs/design.md "Layout and
dependency direction").  ``migrations/env.py`` may: alembic compares the entities' metadata.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.imports import ROOT, imported_modules, module_name

MODELS = ROOT / "benchdb" / "db" / "models.py"
ENTITIES = sorted(
    node.name for node in ast.parse(MODELS.read_text()).body if isinstance(node, ast.ClassDef)
)
FORBIDDEN = {"benchdb.db.models", *(f"benchdb.db.{name}" for name in ENTITIES)}
CHECKED = ("benchdb", "collectors", "kernels")


def _package(path: Path) -> str:
    name = module_name(path)
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def offenders(path: Path, source: str) -> list[str]:
    """``file:line imports name`` for each import of the entities in ``source`` (at
    ``path``): the module, or an entity by name from the models or the package."""
    rel = path.relative_to(ROOT)
    found = {
        (line, name)
        for line, name in imported_modules(ast.parse(source), _package(path))
        if name in FORBIDDEN or name.startswith("benchdb.db.models.")
    }
    lines = {line for line, name in found if name != "benchdb.db.models"}
    return sorted(
        f"{rel}:{line} imports {name}"
        for line, name in found
        if name != "benchdb.db.models" or line not in lines
    )


def _checked_files() -> list[Path]:
    db = ROOT / "benchdb" / "db"
    return [
        path
        for top in CHECKED
        for path in sorted((ROOT / top).rglob("*.py"))
        if db not in path.parents
    ]


def test_no_module_outside_the_data_layer_imports_an_orm_entity() -> None:
    found = [o for path in _checked_files() for o in offenders(path, path.read_text())]
    assert not found, "\n".join(found)


def test_the_check_sees_an_entity_imported_from_the_models_or_the_package() -> None:
    where = ROOT / "benchdb" / "regress" / "example.py"
    assert offenders(where, "from ..db.models import Run\n") == [
        "benchdb/regress/example.py:1 imports benchdb.db.models.Run"
    ]
    assert offenders(where, "from ..db import Measurement, open_database\n") == [
        "benchdb/regress/example.py:1 imports benchdb.db.Measurement"
    ]
    assert offenders(where, "import benchdb.db.models\n")
    assert not offenders(where, "from ..db.runstate import RunStatus\nfrom ..db import engine\n")
    assert "Run" in ENTITIES and "RunStatus" not in ENTITIES
