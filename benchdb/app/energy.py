"""Energy to solution: RAPL counters where readable, a power model otherwise.

ESCAPE D3.5 (paper 000, section 5.2) measures package (PKG) and DRAM energy
through RAPL's powercap interface and models the energy of a run from the
time it takes: ``E = T * P`` with the power of the active and idle parts of
the processor and of the memory (its modified model "estimates energy based on
the time required to perform work", with PKG and DRAM terms and a constant
draw).  Here:

* :class:`RaplReader` reads ``/sys/class/powercap/intel-rapl:*`` (package
  domains and their ``dram`` subdomains), counters in microjoules that wrap at
  ``max_energy_range_uj``; a difference of two snapshots undoes one wrap.
* :class:`PowerModel` estimates ``E_pkg = T (P_pkg,idle + n_busy P_core,busy
  + n_idle P_core,idle)`` and ``E_dram = T P_dram`` per node, from parameters
  the user gives (a JSON file or options), for machines whose counters are
  not readable (virtual machines, most clusters without root).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from ..errors import UserError

POWERCAP = Path("/sys/class/powercap")


@dataclass(frozen=True)
class RaplDomain:
    """One energy counter: ``package-0`` or ``package-0/dram``."""

    name: str
    kind: str  # "package" or "dram"
    path: Path
    max_uj: int


def _read_int(path: Path) -> int:
    return int(path.read_text().strip())


class RaplReader:
    """Package and DRAM energy counters of this machine, where the kernel exposes them."""

    def __init__(self, root: Path = POWERCAP) -> None:
        self.root = root
        self.domains: list[RaplDomain] = []
        self.reason = ""
        if not root.is_dir():
            self.reason = f"{root} is absent (no RAPL powercap interface on this machine)"
            return
        for pkg in sorted(root.glob("intel-rapl:[0-9]*")):
            if pkg.name.count(":") != 1:
                continue
            self._add(pkg, "")
            for sub in sorted(pkg.glob(f"{pkg.name}:[0-9]*")):
                self._add(sub, self._name(pkg) + "/")
        if not self.domains and not self.reason:
            self.reason = f"no readable package or dram counters under {root}"

    @staticmethod
    def _name(path: Path) -> str:
        return (path / "name").read_text().strip()

    def _add(self, path: Path, prefix: str) -> None:
        try:
            name = self._name(path)
            kind = "package" if name.startswith("package") else name
            if kind not in ("package", "dram"):
                return
            _read_int(path / "energy_uj")
            self.domains.append(
                RaplDomain(prefix + name, kind, path, _read_int(path / "max_energy_range_uj"))
            )
        except (OSError, ValueError) as exc:
            self.reason = f"{path / 'energy_uj'} is not readable ({exc})"

    @property
    def available(self) -> bool:
        return bool(self.domains)

    def snapshot(self) -> dict[str, int]:
        """Raw counter values (microjoules), one per domain."""
        return {d.name: _read_int(d.path / "energy_uj") for d in self.domains}

    def energy(self, before: dict[str, int], after: dict[str, int]) -> dict[str, Any]:
        """Joules between two snapshots, per domain and summed by kind; one wrap undone."""
        per_domain: dict[str, float] = {}
        for d in self.domains:
            delta = after[d.name] - before[d.name]
            if delta < 0:
                delta += d.max_uj + 1
            per_domain[d.name] = delta * 1e-6
        totals = {
            f"{kind}_j": sum(per_domain[d.name] for d in self.domains if d.kind == kind)
            for kind in ("package", "dram")
        }
        return {"source": "rapl", **totals, "domains": per_domain}

    def describe_absence(self) -> dict[str, Any]:
        return {"source": "none", "reason": self.reason}


@dataclass(frozen=True)
class PowerModel:
    """Per-node power parameters in watts (paper 000 section 5.2, time-based model)."""

    core_busy_w: float
    core_idle_w: float = 0.0
    package_idle_w: float = 0.0
    dram_w: float = 0.0

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, int | float) or value < 0:
                raise UserError(
                    f"power parameter {f.name}={value!r} must be a non-negative number of watts"
                )

    def energy(self, seconds: float, busy_cores: int, cores: int, nodes: int = 1) -> dict[str, Any]:
        """Estimated joules for ``seconds`` with ``busy_cores`` of ``cores`` busy per node."""
        idle = max(cores - busy_cores, 0)
        pkg_w = self.package_idle_w + busy_cores * self.core_busy_w + idle * self.core_idle_w
        package_j = nodes * seconds * pkg_w
        dram_j = nodes * seconds * self.dram_w
        return {
            "source": "model",
            "package_j": package_j,
            "dram_j": dram_j,
            "total_j": package_j + dram_j,
        }

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


def load_power_file(path: Path) -> PowerModel:
    """A :class:`PowerModel` from JSON, e.g. ``{"core_busy_w": 12, "dram_w": 4}``."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise UserError(f"cannot read power file {path}: {exc}; give a JSON object") from exc
    known = {f.name for f in fields(PowerModel)}
    if not isinstance(data, dict) or "core_busy_w" not in data or set(data) - known:
        raise UserError(
            f"power file {path} must be a JSON object with core_busy_w and optionally "
            f"{', '.join(sorted(known - {'core_busy_w'}))} (watts)"
        )
    return PowerModel(**data)
