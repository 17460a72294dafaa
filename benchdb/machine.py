"""The machine fingerprint: what the hardware is, read from the OS.

Cache sizes matter most: the collectors derive problem sizes from them, and the
predictor marks them on every curve (paper 003 Fig. 3).  They come from sysfs
(``/sys/devices/system/cpu/cpu0/cache/index*``), with ``lscpu`` and then
``sysconf`` as fallbacks, so nothing about any machine is hard-coded.

Identity (:mod:`benchdb.node_class`): the description's node class -- what
sets performance, shared by identical nodes and kept across OS and microcode
updates -- and the host, the node's name.  The full description is stored
with each host all the same, for a user to see what a node reported.
"""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

from .node_class import NodeClassInfo, host_fingerprint
from .scheduler import node_name

SYS_CPU = Path("/sys/devices/system/cpu")
SYS_NODE = Path("/sys/devices/system/node")


@dataclass(frozen=True)
class CacheLevel:
    """One cache as the OS describes it; ``shared_cpus`` lists the CPUs sharing it."""

    level: int
    type: str  # Data, Instruction, Unified
    size_bytes: int
    line_bytes: int
    associativity: int
    shared_cpus: tuple[int, ...]

    @property
    def name(self) -> str:
        suffix = {"Data": "d", "Instruction": "i"}.get(self.type, "")
        return f"L{self.level}{suffix}"


@dataclass(frozen=True)
class MachineInfo:
    """What the OS says about this machine; ``hostname`` is the node name
    (:func:`benchdb.scheduler.node_name`)."""

    hostname: str
    cpu_model: str
    sockets: int
    cores: int
    threads_per_core: int
    numa_nodes: int
    memory_bytes: int
    caches: tuple[CacheLevel, ...]
    isa_flags: tuple[str, ...]
    os: str
    kernel_release: str
    logical_cpus: int
    source: str = "sysfs"
    extra: dict[str, Any] = field(default_factory=dict)

    def data_caches(self) -> list[CacheLevel]:
        """Caches that hold data (L1d, L2, L3...), smallest level first."""
        return sorted((c for c in self.caches if c.type != "Instruction"), key=lambda c: c.level)

    def cache(self, name: str) -> CacheLevel | None:
        return next((c for c in self.caches if c.name == name), None)

    def last_level_cache(self) -> CacheLevel | None:
        data = self.data_caches()
        return data[-1] if data else None

    def with_caches(self, sizes: Sequence[int]) -> MachineInfo:
        """This machine described with other data caches (``sizes``, smallest level first):
        what a sweep would plan on a machine one cannot run on (``collect --dry-run``)."""
        caches = tuple(
            CacheLevel(i + 1, "Data" if i == 0 else "Unified", size, 64, 0, ())
            for i, size in enumerate(sizes)
        )
        return replace(self, caches=caches, source="described")

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["caches"] = [dict(asdict(c), name=c.name) for c in self.caches]
        d["isa_flags"] = list(self.isa_flags)
        return d

    @property
    def node_class(self) -> NodeClassInfo:
        """What sets this machine's performance (:mod:`benchdb.node_class`)."""
        return NodeClassInfo.of(self.to_dict())

    @property
    def fingerprint(self) -> str:
        """The host's identity: its node class and its name."""
        return host_fingerprint(self.node_class.fingerprint, self.hostname)


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def parse_size(text: str) -> int:
    """'32K' / '1024K' / '36 MiB' / '2 MiB (2 instances)' -> bytes."""
    m = re.match(r"\s*([\d.]+)\s*([KMGT]?)(i?B)?", text, re.I)
    if not m:
        raise ValueError(f"cannot parse a size from {text!r}")
    scale = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}[m.group(2).upper()]
    return int(float(m.group(1)) * scale)


def parse_cpu_list(text: str) -> tuple[int, ...]:
    """'0-3,8' -> (0, 1, 2, 3, 8)."""
    cpus: list[int] = []
    for part in filter(None, text.split(",")):
        lo, _, hi = part.partition("-")
        cpus.extend(range(int(lo), int(hi or lo) + 1))
    return tuple(cpus)


def read_caches_sysfs(root: Path = SYS_CPU) -> tuple[CacheLevel, ...]:
    caches = []
    for index in sorted((root / "cpu0" / "cache").glob("index*")):
        size = _read(index / "size")
        if size is None:
            continue
        caches.append(
            CacheLevel(
                level=int(_read(index / "level") or 0),
                type=_read(index / "type") or "Unified",
                size_bytes=parse_size(size),
                line_bytes=int(_read(index / "coherency_line_size") or 64),
                associativity=int(_read(index / "ways_of_associativity") or 0),
                shared_cpus=parse_cpu_list(_read(index / "shared_cpu_list") or "0"),
            )
        )
    return tuple(caches)


def read_caches_lscpu() -> tuple[CacheLevel, ...]:
    """Fallback when sysfs has no cache folder (some containers): ``lscpu -C``.

    lscpu reports totals over all instances; divide by the instance count to
    get one cache's size.
    """
    try:
        out = subprocess.run(
            ["lscpu", "-C", "--json"], capture_output=True, text=True, check=True, timeout=10
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return ()
    caches = []
    for row in json.loads(out).get("caches", []):
        name = row.get("name", "")
        m = re.match(r"L(\d)([di]?)", name)
        if not m:
            continue
        total = parse_size(str(row.get("all-size") or row.get("one-size") or "0"))
        one = row.get("one-size")
        size = parse_size(str(one)) if one else total
        caches.append(
            CacheLevel(
                level=int(m.group(1)),
                type={"d": "Data", "i": "Instruction"}.get(m.group(2), "Unified"),
                size_bytes=size,
                line_bytes=int(row.get("coherency-size") or 64),
                associativity=int(row.get("ways") or 0),
                shared_cpus=(),
            )
        )
    return tuple(caches)


def _cpuinfo() -> dict[str, str]:
    info: dict[str, str] = {}
    text = _read(Path("/proc/cpuinfo")) or ""
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            if info:
                break  # first processor block is enough
            continue
        info.setdefault(key.strip(), value.strip())
    return info


def _topology(logical: int) -> tuple[int, int, int]:
    """(sockets, physical cores, threads per core) from sysfs topology."""
    packages: set[str] = set()
    cores: set[tuple[str, str]] = set()
    for cpu in range(logical):
        topo = SYS_CPU / f"cpu{cpu}" / "topology"
        pkg = _read(topo / "physical_package_id")
        core = _read(topo / "core_id")
        if pkg is None or core is None:
            continue
        packages.add(pkg)
        cores.add((pkg, core))
    if not cores:
        return 1, logical, 1
    return len(packages), len(cores), max(1, logical // len(cores))


def _memory_bytes() -> int:
    meminfo = _read(Path("/proc/meminfo")) or ""
    m = re.search(r"MemTotal:\s+(\d+)\s*kB", meminfo)
    if m:
        return int(m.group(1)) * 1024
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def available_memory_bytes() -> int:
    """Memory a new allocation can use now (``MemAvailable``), for the memory guard."""
    m = re.search(r"MemAvailable:\s+(\d+)\s*kB", _read(Path("/proc/meminfo")) or "")
    if m:
        return int(m.group(1)) * 1024
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")


@cache
def detect_machine() -> MachineInfo:
    """Read this machine's description from the OS (cached per process)."""
    logical = os.cpu_count() or 1
    cpuinfo = _cpuinfo()
    caches = read_caches_sysfs()
    source = "sysfs"
    if not caches:
        caches, source = read_caches_lscpu(), "lscpu"
    sockets, cores, tpc = _topology(logical)
    numa = len(list(SYS_NODE.glob("node[0-9]*"))) or 1
    uname = platform.uname()
    return MachineInfo(
        hostname=node_name(),
        cpu_model=cpuinfo.get("model name") or uname.processor or uname.machine,
        sockets=sockets,
        cores=cores,
        threads_per_core=tpc,
        numa_nodes=numa,
        memory_bytes=_memory_bytes(),
        caches=caches,
        isa_flags=tuple(sorted((cpuinfo.get("flags") or cpuinfo.get("Features") or "").split())),
        os=f"{uname.system} {uname.machine}",
        kernel_release=uname.release,
        logical_cpus=logical,
        source=source,
    )
