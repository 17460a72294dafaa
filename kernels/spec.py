"""A user's program, described by a TOML spec file (format 1, ``docs/programs.md``).

Parsing checks everything that can be checked without running anything: the
fields and their types, unknown fields (a typo must not silently fall back to
a default), the placeholders of the command against the declared extents,
and the layout (:class:`~.layout.Layout`).  Each problem is one
:class:`~.api.KernelError` naming the file, the field and the fix.
"""

from __future__ import annotations

import re
import shlex
import string
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .api import DTYPE_BYTES, KernelError
from .layout import Layout
from .parallel_spec import ParallelSpec, parse_parallel
from .spec_table import SpecTable

FORMAT = 1
DEFAULT_TIMEOUT_S = 600.0
NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
LOOP_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]*")
PLACEHOLDERS = ("reps", "precision", "threads", "binary")

_TOP = {"format", "program", "shape", "footprint", "loops", "parallel", "compare"}
"""``compare`` is the project's CI settings (benchdb.config), which a spec file may also hold."""
_PROGRAM = {
    "name", "description", "workdir", "build", "binary", "command", "timeout", "precisions",
}  # fmt: skip
_SHAPE = {"extents", "contiguous", "min_extent"}
_FOOTPRINT = {"arrays", "halo", "bytes"}
_LOOP = {"flops", "loads", "stores", "updates", "description"}


@dataclass(frozen=True)
class LoopSpec:
    """One timed loop: reference flops, loads and stores per updated point (paper
    003 Table I counting) and which points it updates."""

    name: str
    flops: float
    loads: float
    stores: float
    layout: Layout  # the program's layout with this loop's ``updates``
    description: str


@dataclass(frozen=True)
class ProgramSpec:
    """A parsed, checked spec file."""

    path: Path
    name: str
    description: str
    workdir: Path
    build: str | None
    binary: Path | None
    command: tuple[str, ...]
    timeout: float
    precisions: tuple[str, ...]
    layout: Layout  # the footprint and shape, ``updates = "inner"``
    loops: tuple[LoopSpec, ...]
    text: bytes  # the file as read: part of the kernels' version
    parallel: ParallelSpec | None = None  # how a whole parallel run goes, if declared

    @property
    def threaded(self) -> bool:
        """Whether the command takes ``{threads}`` (else one thread only)."""
        return any("{threads}" in arg for arg in self.command)


def load_spec(path: str | Path) -> ProgramSpec:
    """Parse and check the spec file at ``path``; :class:`KernelError` naming the fix."""
    path = Path(path).expanduser()
    try:
        text = path.read_bytes()
    except OSError as exc:
        raise KernelError(
            f"cannot read spec {path} ({exc.strerror}); give the path of a TOML spec file "
            "(docs/programs.md)"
        ) from None
    try:
        doc = tomllib.loads(text.decode())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise KernelError(f"spec {path} is not valid TOML: {exc}") from None
    path = path.resolve()
    top = SpecTable(path, "the spec", doc, _TOP)
    fmt = top.get("format", int, what=f"write format = {FORMAT} at the top")
    if fmt != FORMAT:
        top.fail(f"format = {fmt} is not supported; this benchdb reads format {FORMAT}")
    program = SpecTable(
        path, "[program]", top.get("program", dict, what="add a [program] table"), _PROGRAM
    )
    name = program.get("name", str, what='name the program, e.g. name = "mymodel"')
    if not NAME_RE.fullmatch(name):
        program.fail(f"name {name!r} must start with a letter and use letters, digits, _ and -")
    workdir = (path.parent / program.get("workdir", str, ".")).resolve()
    if not workdir.is_dir():
        program.fail(f"workdir {workdir} is not a folder; give it relative to the spec file")
    binary_text = program.get("binary", str, None)
    binary = (workdir / binary_text).resolve() if binary_text else None
    build = program.get("build", str, None)
    timeout = float(program.get("timeout", (int, float), DEFAULT_TIMEOUT_S))
    if timeout <= 0:
        program.fail(f"timeout = {timeout:g} must be a positive number of seconds")
    precisions = tuple(program.get("precisions", list, ["float64"]))
    bad = [p for p in precisions if p not in DTYPE_BYTES]
    if bad or not precisions:
        program.fail(
            f"precisions {list(precisions)} must list float64 and/or float32, e.g. ['float64']"
        )
    shape_table = SpecTable(
        path, "[shape]", top.get("shape", dict, what="add a [shape] table"), _SHAPE
    )
    footprint = SpecTable(
        path, "[footprint]", top.get("footprint", dict, what="add a [footprint] table"), _FOOTPRINT
    )
    extents = shape_table.get("extents", list, what="name the extents, e.g. extents = ['M', 'N']")
    try:
        layout = Layout(
            extents=tuple(extents),
            arrays=footprint.get("arrays", int, None),
            halo=tuple(footprint.get("halo", list, [])),
            bytes=footprint.get("bytes", str, None),
            contiguous=shape_table.get("contiguous", str, None),
            min_extent=shape_table.get("min_extent", int, 1),
        )
    except KernelError as exc:
        raise KernelError(f"spec {path}: {exc}") from None
    command = _command(program, layout, precisions)
    loops_table = top.get("loops", dict, what="add a [loops.<name>] table for each timed loop")
    if not loops_table:
        top.fail("declares no loops; add a [loops.<name>] table for each timed loop")
    loops = tuple(_loop(path, loop, table, layout) for loop, table in loops_table.items())
    parallel = None
    if "parallel" in doc:
        names = tuple(loop.name for loop in loops)
        parallel = parse_parallel(path, doc["parallel"], layout, names, precisions, binary)
    return ProgramSpec(
        path=path,
        name=name,
        description=program.get("description", str, ""),
        workdir=workdir,
        build=build,
        binary=binary,
        command=command,
        timeout=timeout,
        precisions=precisions,
        layout=layout,
        loops=loops,
        text=text,
        parallel=parallel,
    )


def _command(program: SpecTable, layout: Layout, precisions: tuple[str, ...]) -> tuple[str, ...]:
    raw = program.get(
        "command", (list, str), what="give the command, e.g. ['./model', '{M}', '{N}', '{reps}']"
    )
    try:
        argv = shlex.split(raw) if isinstance(raw, str) else list(raw)
    except ValueError as exc:
        program.fail(f"command {raw!r} does not split into arguments ({exc})")
    if not argv or not all(isinstance(a, str) for a in argv):
        program.fail("command must be a non-empty list of strings")
    allowed = (*layout.extents, *PLACEHOLDERS)
    used: set[str] = set()
    for arg in argv:
        try:
            fields = [f for _, f, _, _ in string.Formatter().parse(arg) if f is not None]
        except ValueError:
            program.fail(f"command argument {arg!r} has unbalanced braces; write {{{{ for a brace")
        for f in fields:
            if f not in allowed:
                program.fail(
                    f"command placeholder {{{f}}} is unknown; use {{{'}, {'.join(allowed)}}}"
                )
            used.add(f)
    needed = [*layout.extents, "reps", *(["precision"] if len(precisions) > 1 else [])]
    missing = [f for f in needed if f not in used]
    if missing:
        program.fail(
            f"command lacks {', '.join('{' + m + '}' for m in missing)}; the program must be "
            "told every extent and the repetition count"
            + (" (and the precision, as precisions lists two)" if "precision" in missing else "")
        )
    if "binary" in used and program.get("binary", str, None) is None:
        program.fail("command uses {binary} but [program] has no binary = ...")
    return tuple(argv)


def _loop(path: Path, name: str, table: Any, layout: Layout) -> LoopSpec:
    where = f"[loops.{name}]"
    fields = SpecTable(path, where, table, _LOOP)
    if not LOOP_RE.fullmatch(name):
        fields.fail(f"loop name {name!r} must use letters, digits, _ and -")
    what = "count per updated point as paper 003 Table I does (docs/programs.md)"
    flops, loads, stores = (fields.number(k, what) for k in ("flops", "loads", "stores"))
    updates = fields.get("updates", str, "inner")
    try:
        mine = replace(layout, updates=updates)
    except KernelError as exc:
        fields.fail(f"updates: {exc}")
    return LoopSpec(name, flops, loads, stores, mine, fields.get("description", str, ""))
