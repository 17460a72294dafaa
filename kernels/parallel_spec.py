"""The optional ``[parallel]`` section of a program spec: what a whole parallel run does.

A sweep measures a program's loops one block at a time; the whole-run model
(docs/design.md "Whole application", after paper 001 eq. 1-5) also needs what
only the program's author knows and no sweep can measure: which extents are
split over the ranks (paper 001 section 3: one block per rank on a px x py
grid), which declared loops one time step runs at the local block's shape,
what one step communicates (halo exchanges, sized as paper 001 eq. 8 sizes
them from the local edge x halo width x element size; global reductions) and
how the program is started on P ranks.  Parsed here, before anything is built
or run, so that a contradiction is one line naming the fix.
"""

from __future__ import annotations

import shlex
import string
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .layout import Layout
from .spec_table import SpecTable

PARTS = ("total", "loops", "exchanges", "cpu")
"""What a whole run reports per rank (``BENCHDB rank <r> <part> <seconds>``): its wall time
of the timed steps; of that the time in its loops and in its halo exchanges; and its CPU
time over those steps, the evidence (docs/design.md "On a shared machine") of the time
other processes held its core, which no model of the machine predicts."""
LAUNCH_PLACEHOLDERS = ("ranks", "px", "py", "steps", "precision", "binary")
DEFAULT_RUN_TIMEOUT_S = 600.0

_PARALLEL = {"split", "step", "serial", "launch", "reports", "timeout", "halo", "reductions"}
_HALO = {"arrays", "width", "element_bytes", "periodic", "sides"}
_REDUCTIONS = {"count", "every", "bytes"}


@dataclass(frozen=True)
class HaloSpec:
    """The halo exchanges of one step: each array exchanged on its own (paper 001 eq. 8)."""

    arrays: tuple[str, ...]
    width: int
    element_bytes: int | None  # None: the precision's itemsize
    periodic: tuple[bool, bool]
    shift: bool  # "one" side: staggered fields, one message per rank and axis


@dataclass(frozen=True)
class ReductionSpec:
    """``count`` global reductions of ``bytes`` each every ``every`` steps (0: none)."""

    count: int
    every: int
    bytes: int


@dataclass(frozen=True)
class ParallelSpec:
    """A parsed ``[parallel]`` section.  The decomposition's px ranks split the first
    extent and py the second; an extent not in ``split`` is never split (its rank
    count must be 1)."""

    split: tuple[str, ...]
    step: tuple[str, ...]  # loops one time step runs, at the local block's shape
    serial: tuple[str, ...]  # loops that do the halo updates on one rank (no exchanges)
    halo: HaloSpec
    reductions: ReductionSpec
    launch: tuple[str, ...]
    reports: tuple[str, ...]
    timeout: float


def parse_parallel(
    path: Path,
    raw: Any,
    layout: Layout,
    loops: tuple[str, ...],
    precisions: tuple[str, ...],
    binary: Path | None,
) -> ParallelSpec:
    """The ``[parallel]`` table ``raw`` of the spec at ``path``, checked against the
    program's layout, declared loops, precisions and binary; KernelError naming the fix."""
    table = SpecTable(path, "[parallel]", raw, _PARALLEL)
    if layout.ndim != 2:
        table.fail(
            f"[parallel] needs two extents (a px x py decomposition), the spec has "
            f"{layout.ndim}; declare [shape] extents = ['M', 'N'] or drop [parallel]"
        )
    split = _names(table, "split", layout.extents, "extents", required=True)
    step = _names(table, "step", loops, "declared loops", required=True)
    serial = _names(table, "serial", loops, "declared loops", required=False)
    both = sorted(set(step) & set(serial))
    if both:
        table.fail(f"[parallel] loop(s) {', '.join(both)} are in both step and serial; keep one")
    halo = _halo(SpecTable(table.path, "[parallel.halo]", table.get("halo", dict, {}), _HALO))
    _check_footprint_halo(table, layout, split, halo)
    raw_reductions = table.get("reductions", dict, {})
    reductions = _reductions(
        SpecTable(table.path, "[parallel.reductions]", raw_reductions, _REDUCTIONS)
    )
    reports = _names(table, "reports", PARTS, "parts", required=False) or ("total",)
    if "total" not in reports:
        table.fail(f"[parallel] reports {list(reports)} lacks 'total'; a whole run reports it")
    timeout = float(table.get("timeout", (int, float), DEFAULT_RUN_TIMEOUT_S))
    if timeout <= 0:
        table.fail(f"[parallel] timeout = {timeout:g} must be a positive number of seconds")
    launch = _launch(table, layout, split, precisions)
    if any("{binary}" in arg for arg in launch) and binary is None:
        table.fail("[parallel] launch uses {binary} but [program] has no binary = ...")
    return ParallelSpec(split, step, serial, halo, reductions, launch, reports, timeout)


def _names(
    table: SpecTable, key: str, allowed: tuple[str, ...], what: str, *, required: bool
) -> tuple[str, ...]:
    """A list of distinct names, each one of ``allowed``."""
    example = f"e.g. {key} = {list(allowed[:2])!r}"
    value = table.get(key, list, ... if required else [], what=example)
    if not all(isinstance(v, str) for v in value) or len(set(value)) != len(value):
        table.fail(f"[parallel] {key} must list distinct names; {example}")
    if required and not value:
        table.fail(f"[parallel] {key} is empty; {example}")
    unknown = [v for v in value if v not in allowed]
    if unknown:
        table.fail(
            f"[parallel] {key} names {', '.join(unknown)}, not among the {what} "
            f"({', '.join(allowed)}); fix the name or declare it"
        )
    return tuple(value)


def _halo(table: SpecTable) -> HaloSpec:
    arrays = table.get("arrays", list, [], what="list the exchanged arrays, e.g. ['u', 'v']")
    if not all(isinstance(a, str) and a for a in arrays) or len(set(arrays)) != len(arrays):
        table.fail("[parallel.halo] arrays must list distinct array names, e.g. ['u', 'v']")
    width = table.get("width", int, 1, what="give the halo width in points, e.g. width = 1")
    if width < 1:
        table.fail(f"[parallel.halo] width = {width} must be at least 1")
    element = table.get("element_bytes", int, None, what="e.g. element_bytes = 8")
    if element is not None and element < 1:
        table.fail(f"[parallel.halo] element_bytes = {element} must be positive")
    periodic = table.get("periodic", (bool, list), True, what="e.g. periodic = [true, true]")
    periodic = [periodic] * 2 if isinstance(periodic, bool) else periodic
    if len(periodic) != 2 or not all(isinstance(p, bool) for p in periodic):
        table.fail("[parallel.halo] periodic must be true, false or two of them, e.g. [true, true]")
    sides = table.get("sides", str, "both", what='sides = "one" or "both"')
    if sides not in ("one", "both"):
        table.fail(
            f'[parallel.halo] sides = {sides!r}: write "one" (staggered fields, a one-sided '
            'shift per axis) or "both" (a halo on either side)'
        )
    return HaloSpec(tuple(arrays), width, element, (periodic[0], periodic[1]), sides == "one")


def _check_footprint_halo(
    table: SpecTable, layout: Layout, split: tuple[str, ...], halo: HaloSpec
) -> None:
    """A declared ``[footprint] halo`` on a split axis must be the exchanges' halo: the
    width on one side, or on both."""
    if not layout.halo or not halo.arrays:
        return
    sides = "one side" if halo.shift else "both sides"
    wanted = halo.width * (1 if halo.shift else 2)
    for extent, declared in zip(layout.extents, layout.halo, strict=True):
        if extent in split and declared != wanted:
            table.fail(
                f"[parallel.halo] width {halo.width} on {sides} "
                f"makes arrays {wanted} longer along {extent}, but [footprint] halo says "
                f"{declared}; make them agree"
            )


def _reductions(table: SpecTable) -> ReductionSpec:
    count = table.get("count", int, 0, what="allreduces per interval, e.g. count = 1")
    every = table.get("every", int, 1, what="the interval in steps, e.g. every = 10")
    nbytes = table.get("bytes", int, 8, what="bytes each reduces, e.g. bytes = 8")
    if count < 0 or every < 1 or nbytes < 1:
        table.fail(
            f"[parallel.reductions] count = {count}, every = {every}, bytes = {nbytes}: count "
            "must be 0 or more, every and bytes positive"
        )
    return ReductionSpec(count, every, nbytes)


def _launch(
    table: SpecTable, layout: Layout, split: tuple[str, ...], precisions: tuple[str, ...]
) -> tuple[str, ...]:
    example = "e.g. ['mpiexec', '-n', '{ranks}', './model', '{M}', '{N}', '{steps}', '{px}', "
    example += "'{py}']"
    raw = table.get("launch", (list, str), what=f"give the launch command, {example}")
    try:
        argv = shlex.split(raw) if isinstance(raw, str) else list(raw)
    except ValueError as exc:
        table.fail(f"[parallel] launch {raw!r} does not split into arguments ({exc})")
    if not argv or not all(isinstance(a, str) and a for a in argv):
        table.fail(f"[parallel] launch must be a non-empty list of strings, {example}")
    allowed = (*layout.extents, *LAUNCH_PLACEHOLDERS)
    used: set[str] = set()
    for arg in argv:
        try:
            names = [f for _, f, _, _ in string.Formatter().parse(arg) if f is not None]
        except ValueError:
            table.fail(f"[parallel] launch argument {arg!r} has unbalanced braces")
        unknown = [f for f in names if f not in allowed]
        if unknown:
            table.fail(
                f"[parallel] launch placeholder {{{unknown[0]}}} is unknown; use "
                f"{{{'}, {'.join(allowed)}}}"
            )
        used.update(names)
    axes = {layout.extents[0]: "px", layout.extents[1]: "py"}
    needed = [*layout.extents, "ranks", "steps", *(axes[e] for e in split)]
    needed += ["precision"] if len(precisions) > 1 else []
    missing = [f for f in needed if f not in used]
    if missing:
        table.fail(
            f"[parallel] launch lacks {', '.join('{' + m + '}' for m in missing)}; the run "
            "must be told the grid, the rank count, the steps and the ranks along each split "
            "extent"
        )
    return tuple(argv)
