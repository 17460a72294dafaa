"""A machine's communication parameters, from fitted models or from a file.

Prediction needs, per placement class (``intra-socket``, ``inter-socket``,
``intra-node`` when the socket is unknown, ``inter-node``): the piecewise
postal model (paper 001 eq. 10, paper 002 eq. 1) and optionally the max-rate
parameters (paper 002 eq. 2-3) per regime; optionally allreduce times and a
contention table (paper 001 Table 1: ``P -> (C_x, C_y)``).

For machines you cannot measure, write them as a JSON or TOML *machine file*
(see ``benchdb/comm/machines/`` for the Summit, Lassen and Bridges tables of
Choi et al. and the AlphaServer and Blue Gene/L tables of Kerbyson & Jones)::

    name = "Blue Gene/L"
    ranks_per_node = 1
    [placements.inter-node]
    regimes = [
      { name = "short", max_bytes = 32, alpha = 4.15e-6, beta = 6.3e-9 },
      { name = "eager", max_bytes = 511, alpha = 3.91e-6, beta = 12.1e-9 },
      { name = "rendezvous", alpha = 7.46e-6, beta = 6.5e-9,
        maxrate = { alpha = 7.0e-6, r_cb = 1.5e8, r_ci = 1e8 } },
    ]

Times in seconds, sizes in bytes, rates in bytes/second; ``max_bytes`` is
inclusive and the last regime is open-ended.
"""

from __future__ import annotations

import json
import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UserError
from .allreduce_model import AllreduceModel
from .maxrate import MaxRateRegime
from .postal import PiecewisePostal, PostalRegime

PLACEMENTS = ("intra-socket", "inter-socket", "intra-node", "inter-node")
INTRA_NODE_PREFERENCE = ("intra-socket", "intra-node", "inter-socket")
BUNDLED = Path(__file__).with_name("machines")


@dataclass(frozen=True)
class CommParams:
    name: str
    source: str
    postal: dict[str, PiecewisePostal]
    # Per placement, the piecewise fit of one MPI_Sendrecv (send and receive at
    # once): measured only, machine files give ping-pong tables.
    exchange: dict[str, PiecewisePostal] = field(default_factory=dict)
    maxrate: dict[str, tuple[MaxRateRegime, ...]] = field(default_factory=dict)
    allreduce: AllreduceModel | None = None
    contention: dict[int, tuple[float, float]] = field(default_factory=dict)
    ranks_per_node: int | None = None

    def placement_for(self, inter_node: bool) -> str:
        """The placement class whose parameters model an intra- or inter-node message."""
        wanted = ("inter-node",) if inter_node else INTRA_NODE_PREFERENCE
        for p in wanted:
            if p in self.postal:
                return p
        where = "inter-node" if inter_node else "intra-node"
        raise UserError(
            f"{self.name} has no {where} communication parameters (it has "
            f"{', '.join(sorted(self.postal)) or 'none'}); measure them with `benchdb comm "
            "collect` on such a placement, or pass a --machine-file that has them"
        )

    def maxrate_regime(self, placement: str, nbytes: float) -> MaxRateRegime | None:
        for r in self.maxrate.get(placement, ()):
            if nbytes >= r.min_bytes and (r.max_bytes is None or nbytes <= r.max_bytes):
                return r
        return None


def _bad(path: Path, what: str) -> UserError:
    return UserError(
        f"machine file {path}: {what}; see the examples in {BUNDLED} "
        "(`benchdb comm machines` lists them)"
    )


def _number(path: Path, where: str, value: Any, *, positive: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _bad(path, f"{where} must be a number, got {value!r}")
    if value < 0 or (positive and value == 0):
        raise _bad(path, f"{where} must be {'positive' if positive else 'non-negative'}")
    return float(value)


def _regimes(path: Path, placement: str, raw: Any) -> tuple[PiecewisePostal, list[MaxRateRegime]]:
    if not isinstance(raw, list) or not raw:
        raise _bad(path, f"placements.{placement}.regimes must be a non-empty list")
    postal, maxrate = [], []
    lo = 0
    for i, r in enumerate(raw):
        where = f"placements.{placement}.regimes[{i}]"
        if not isinstance(r, dict):
            raise _bad(path, f"{where} must be a table/object")
        last = i == len(raw) - 1
        hi = r.get("max_bytes")
        if last and hi is not None:
            raise _bad(path, f"{where} is the last regime and must have no max_bytes")
        if not last:
            hi = int(_number(path, f"{where}.max_bytes", hi))
            if hi < lo:
                raise _bad(path, f"{where}.max_bytes {hi} is below the previous regime's")
        regime = PostalRegime(
            name=str(r.get("name", f"r{i + 1}")),
            min_bytes=lo,
            max_bytes=hi,
            alpha=_number(path, f"{where}.alpha", r.get("alpha")),
            beta=_number(path, f"{where}.beta", r.get("beta")),
        )
        postal.append(regime)
        mr = r.get("maxrate")
        if mr is not None:
            if not isinstance(mr, dict):
                raise _bad(path, f"{where}.maxrate must be a table/object")
            alpha = _number(path, f"{where}.maxrate.alpha", mr.get("alpha"))
            base = dict(name=regime.name, min_bytes=lo, max_bytes=hi, alpha=alpha)
            if "beta" in mr:
                beta = _number(path, f"{where}.maxrate.beta", mr["beta"])
                maxrate.append(MaxRateRegime(**base, form="short", beta=beta))
            else:
                r_cb = _number(path, f"{where}.maxrate.r_cb", mr.get("r_cb"), positive=True)
                r_ci = _number(path, f"{where}.maxrate.r_ci", mr.get("r_ci"))
                maxrate.append(MaxRateRegime(**base, form="maxrate", r_cb=r_cb, r_ci=r_ci))
        lo = (hi or 0) + 1
    return PiecewisePostal(tuple(postal)), maxrate


def parse_machine(data: Any, path: Path) -> CommParams:
    """Validate a machine file's content; UserError naming the bad field."""
    if not isinstance(data, dict):
        raise _bad(path, "the top level must be a table/object")
    placements = data.get("placements")
    if not isinstance(placements, dict) or not placements:
        raise _bad(path, f"needs a 'placements' table with one or more of {', '.join(PLACEMENTS)}")
    postal, maxrate = {}, {}
    for name, body in placements.items():
        if name not in PLACEMENTS:
            raise _bad(path, f"unknown placement {name!r}; use one of {', '.join(PLACEMENTS)}")
        if not isinstance(body, dict):
            raise _bad(path, f"placements.{name} must be a table/object")
        postal[name], mr = _regimes(path, name, body.get("regimes"))
        if mr:
            maxrate[name] = tuple(mr)
    contention = {}
    for p, pair in (data.get("contention") or {}).items():
        if not str(p).isdigit() or not isinstance(pair, list) or len(pair) != 2:
            raise _bad(path, f"contention entry {p!r} must map a rank count to [C_x, C_y]")
        contention[int(p)] = (
            _number(path, f"contention.{p}[0]", pair[0]),
            _number(path, f"contention.{p}[1]", pair[1]),
        )
    allreduce = None
    if "allreduce" in data:
        raw = data["allreduce"]
        if not isinstance(raw, dict) or not isinstance(raw.get("measured", []), list):
            raise _bad(path, "allreduce must be a table with a 'measured' list")
        points = []
        for i, row in enumerate(raw.get("measured", [])):
            if not isinstance(row, dict):
                raise _bad(path, f"allreduce.measured[{i}] must be a table/object")
            points.append(
                (
                    int(
                        _number(
                            path, f"allreduce.measured[{i}].ranks", row.get("ranks"), positive=True
                        )
                    ),
                    int(
                        _number(
                            path, f"allreduce.measured[{i}].bytes", row.get("bytes"), positive=True
                        )
                    ),
                    _number(
                        path, f"allreduce.measured[{i}].seconds", row.get("seconds"), positive=True
                    ),
                )
            )
        allreduce = AllreduceModel(tuple(points))
    rpn = data.get("ranks_per_node")
    return CommParams(
        name=str(data.get("name", path.stem)),
        source=str(data.get("source", str(path))),
        postal=postal,
        maxrate=maxrate,
        allreduce=allreduce,
        contention=contention,
        ranks_per_node=None
        if rpn is None
        else int(_number(path, "ranks_per_node", rpn, positive=True)),
    )


def bundled_machines() -> list[Path]:
    return sorted(BUNDLED.glob("*.toml")) + sorted(BUNDLED.glob("*.json"))


def resolve_machine_file(name: str) -> Path:
    """A path, or the stem of a bundled file (``summit``, ``bluegene_l``, ...)."""
    path = Path(name).expanduser()
    if path.exists():
        return path
    for candidate in bundled_machines():
        if candidate.stem == name:
            return candidate
    names = ", ".join(p.stem for p in bundled_machines())
    raise UserError(f"machine file {name!r} not found; give a path or a bundled name ({names})")


def load_machine_file(name: str | Path) -> CommParams:
    """Read and validate a JSON or TOML machine file (by path or bundled name)."""
    path = resolve_machine_file(str(name))
    try:
        text = path.read_text()
    except OSError as exc:
        raise _bad(path, f"cannot be read ({exc.strerror})") from exc
    try:
        data = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        kind = "JSON" if path.suffix == ".json" else "TOML"
        raise _bad(path, f"is not valid {kind} ({exc})") from exc
    return parse_machine(data, path)
