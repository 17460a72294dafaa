"""Where a collection's kernels come from: built-ins, installed plugins, ``--plugin``
modules and ``--program`` spec files, gathered into one :class:`~.registry.Catalog`.

Plugins are found through the entry-point group ``benchdb.kernels`` of installed
packages (``[project.entry-points."benchdb.kernels"] ocean = "benchdb_ocean"``)
and through ``--plugin MODULE_OR_PATH``.  An entry point or module provides
``BENCHDB_KERNELS``, a list of :class:`~.plugin.PluginKernel`; the plugin's name
(the first part of its kernels' names) is the entry point's name, else the
module's ``BENCHDB_PLUGIN``, else the module's or file's own name.

Each user source is recorded with the hash of its code, so that resuming a run
loads the same code again or refuses (:func:`reload_catalog`).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from collections.abc import Iterable, Mapping, Sequence
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from types import ModuleType
from typing import Any

from .api import KernelError
from .plugin import PluginBenchmark, plugin_benchmarks
from .program import ProgramBenchmark, build, source_hash
from .registry import BUILTIN, Catalog
from .spec import NAME_RE, load_spec

ENTRY_POINT_GROUP = "benchdb.kernels"


def installed_plugins() -> list[EntryPoint]:
    """The entry points of group ``benchdb.kernels`` (not loaded)."""
    return sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: ep.name)


def _combined(benches: Sequence[PluginBenchmark]) -> str:
    digest = hashlib.sha256()
    for b in benches:
        digest.update(b.source_hash.encode())
    return digest.hexdigest()


def _declared(target: Any, what: str) -> Any:
    """``BENCHDB_KERNELS`` of a module, or the list an entry point names directly."""
    if isinstance(target, ModuleType):
        if not hasattr(target, "BENCHDB_KERNELS"):
            raise KernelError(
                f"{what} has no BENCHDB_KERNELS; list its PluginKernel declarations in it "
                "(docs/plugins.md)"
            )
        return target.BENCHDB_KERNELS
    return target


def _plugin_name(name: str, what: str) -> str:
    if not NAME_RE.fullmatch(name):
        raise KernelError(
            f"{what}: plugin name {name!r} must start with a letter and use letters, digits, "
            "_ and - (set BENCHDB_PLUGIN in the module)"
        )
    return name


def load_entry_point(ep: EntryPoint) -> list[PluginBenchmark]:
    """The benchmarks of one installed plugin; KernelError if it fails to import."""
    what = f"installed plugin {ep.name!r} ({ep.value})"
    try:
        target = ep.load()
    except Exception as exc:  # the user's code may raise anything on import
        raise KernelError(
            f"{what} failed to import: {type(exc).__name__}: {exc}; fix it or uninstall it "
            f"(pip uninstall {ep.dist.name if ep.dist else ep.name})"
        ) from None
    return plugin_benchmarks(_plugin_name(ep.name, what), _declared(target, what))


def import_plugin(target: str) -> tuple[str, ModuleType]:
    """(plugin name, module) for ``--plugin MODULE_OR_PATH``: a ``.py`` file or a module
    importable from the current folder or the Python path."""
    what = f"plugin {target!r}"
    path = Path(target).expanduser()
    try:
        if target.endswith(".py") or path.is_file():
            if not path.is_file():
                raise KernelError(f"{what}: no such file; give a .py file or a module name")
            name = f"benchdb_plugin_{path.stem}"
            spec = importlib.util.spec_from_file_location(name, path.resolve())
            if spec is None or spec.loader is None:
                raise KernelError(f"{what} cannot be loaded as a Python module")
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
            default = path.stem
        else:
            if "" not in sys.path and "." not in sys.path:
                sys.path.insert(0, "")
            module = importlib.import_module(target)
            default = target.rsplit(".", 1)[-1]
    except KernelError:
        raise
    except ModuleNotFoundError as exc:
        raise KernelError(
            f"{what} failed to import: {exc}; give a .py file, or a module on the Python path"
        ) from None
    except Exception as exc:  # the user's code may raise anything on import
        raise KernelError(f"{what} failed to import: {type(exc).__name__}: {exc}") from None
    return _plugin_name(getattr(module, "BENCHDB_PLUGIN", default), what), module


def load_plugin(target: str) -> tuple[list[PluginBenchmark], dict[str, Any]]:
    """The benchmarks of ``--plugin target`` and the source record to reload them."""
    name, module = import_plugin(target)
    benches = plugin_benchmarks(name, _declared(module, f"plugin {target!r}"))
    path = Path(target).expanduser()
    where = str(path.resolve()) if path.is_file() else target
    return benches, {"plugin": where, "version": _combined(benches)}


def load_program(spec_path: str | Path) -> tuple[ProgramBenchmark, dict[str, Any]]:
    """Parse the spec, build the program, hash it: the benchmark and its source record."""
    spec = load_spec(spec_path)
    build(spec)
    if spec.binary is not None and not spec.binary.is_file():
        raise KernelError(
            f"program {spec.name}: binary {spec.binary} does not exist"
            + (" after the build command ran" if spec.build else "")
            + "; build it or fix [program] binary"
        )
    bench = ProgramBenchmark(spec, source_hash(spec))
    return bench, {"program": str(spec.path), "version": bench.source_hash}


def load_catalog(
    programs: Iterable[str] = (),
    plugins: Iterable[str] = (),
    *,
    installed: bool = True,
    base: Catalog = BUILTIN,
) -> Catalog:
    """``base`` plus the installed plugins (if ``installed``), ``plugins`` and ``programs``."""
    catalog = base
    if installed:
        for ep in installed_plugins():
            benches = load_entry_point(ep)
            catalog = catalog.extended(
                benches, {"entry_point": ep.name, "version": _combined(benches)}
            )
    for target in plugins:
        benches, source = load_plugin(target)
        catalog = catalog.extended(benches, source)
    for path in programs:
        bench, source = load_program(path)
        catalog = catalog.extended([bench], source)
    return catalog


def reload_catalog(sources: Sequence[Mapping[str, Any]], *, run: int | str = "") -> Catalog:
    """The catalog a run was collected with, from its recorded sources; KernelError
    if any user code changed since (its points would not be the same kernel version)."""
    catalog = BUILTIN
    by_name = {ep.name: ep for ep in installed_plugins()}
    for source in sources:
        if "program" in source:
            bench, now = load_program(source["program"])
            benches: list[Any] = [bench]
        elif "plugin" in source:
            benches, now = load_plugin(source["plugin"])
        elif source.get("entry_point") in by_name:
            benches = load_entry_point(by_name[source["entry_point"]])
            now = {**source, "version": _combined(benches)}
        else:
            raise KernelError(
                f"run {run} was collected with plugin {source.get('entry_point')!r}, which is "
                "no longer installed; install it again or start a new run"
            )
        if now["version"] != source["version"]:
            what = next(f"{k} {v}" for k, v in source.items() if k != "version")
            raise KernelError(
                f"{what} changed since run {run} was collected; its points would be another "
                "version of the kernels: start a new run instead of resuming"
            )
        catalog = catalog.extended(benches, source)
    return catalog
