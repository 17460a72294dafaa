"""Node classes: what an OS update or another node's name changes leaves the class alone;
what sets performance (a cache, the cores) makes another class."""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

from benchdb.machine import CacheLevel, MachineInfo, detect_machine
from benchdb.node_class import class_fields, isa_features, round_memory
from benchdb.scheduler import node_name

GiB = 1 << 30
MIGRATION = Path(__file__).parents[1] / "migrations" / "versions" / "0006_node_classes.py"

FLAGS = (
    "fpu vme sse sse2 ht syscall nx pni pclmulqdq ssse3 fma sse4_1 sse4_2 x2apic movbe popcnt "
    "aes avx f16c rdrand hypervisor abm bmi1 hle avx2 smep bmi2 rtm avx512f avx512dq avx512cd "
    "avx512bw avx512vl avx512_bf16 avx512_fp16 amx_tile amx_int8 amx_bf16 tsc_known_freq "
    "arch_capabilities"
)
# A compute node as its OS describes it (the shape detect_machine() reads on x86).
NODE = MachineInfo(
    hostname="node001",
    cpu_model="Intel(R) Xeon(R) Platinum 8480+",
    sockets=2,
    cores=112,
    threads_per_core=2,
    numa_nodes=2,
    memory_bytes=int(503.4 * GiB),  # 512 GiB installed
    caches=(
        CacheLevel(1, "Data", 48 << 10, 64, 12, (0, 112)),
        CacheLevel(1, "Instruction", 32 << 10, 64, 8, (0, 112)),
        CacheLevel(2, "Unified", 2 << 20, 64, 16, (0, 112)),
        CacheLevel(3, "Unified", 105 << 20, 64, 15, tuple(range(56)) + tuple(range(112, 168))),
    ),
    isa_flags=tuple(sorted(FLAGS.split())),
    os="Linux x86_64",
    kernel_release="5.14.0-362.el9.x86_64",
    logical_cpus=224,
)


def after_update(m: MachineInfo) -> MachineInfo:
    """The same node after an OS and microcode update: mitigation flags added, TSX removed,
    the kernel reserving 1.5 % more memory, a new kernel release, caches read by lscpu."""
    return dataclasses.replace(
        m,
        isa_flags=tuple(sorted({*m.isa_flags, "md_clear", "flush_l1d", "ibrs"} - {"hle", "rtm"})),
        memory_bytes=int(m.memory_bytes * 0.985),
        kernel_release="5.14.0-427.el9.x86_64",
        extra={"microcode": "0x2b000590"},
    )


def test_volatile_fields_keep_the_class() -> None:
    base = NODE.node_class.fingerprint
    assert after_update(NODE).node_class.fingerprint == base
    for changed in (
        dataclasses.replace(NODE, hostname="node417"),
        dataclasses.replace(NODE, memory_bytes=int(NODE.memory_bytes * 1.01)),
        dataclasses.replace(NODE, memory_bytes=int(NODE.memory_bytes * 0.97)),
        dataclasses.replace(NODE, kernel_release="6.1.0"),
        dataclasses.replace(NODE, cpu_model="Intel(R)  Xeon(R)  Platinum 8480+ "),
    ):
        assert changed.node_class.fingerprint == base
    assert after_update(NODE).fingerprint == NODE.fingerprint  # the same host, too
    other = dataclasses.replace(NODE, hostname="node417")
    assert other.fingerprint != NODE.fingerprint  # another host of the class


def _with_cache(m: MachineInfo, level: int, size: int) -> MachineInfo:
    caches = tuple(
        dataclasses.replace(c, size_bytes=size) if c.level == level else c for c in m.caches
    )
    return dataclasses.replace(m, caches=caches)


@pytest.mark.parametrize(
    "changed",
    [
        _with_cache(NODE, 2, 1 << 20),
        _with_cache(NODE, 3, 60 << 20),
        dataclasses.replace(NODE, cores=96),
        dataclasses.replace(NODE, sockets=1),
        dataclasses.replace(NODE, threads_per_core=1),
        dataclasses.replace(NODE, numa_nodes=8),
        dataclasses.replace(NODE, memory_bytes=int(1007 * GiB)),  # 1 TiB installed
        dataclasses.replace(NODE, cpu_model="AMD EPYC 9654 96-Core Processor"),
        dataclasses.replace(NODE, isa_flags=tuple(f for f in NODE.isa_flags if "avx512" not in f)),
    ],
    ids=["L2", "L3", "cores", "sockets", "smt", "numa", "memory", "cpu", "no-avx512"],
)
def test_what_sets_performance_makes_another_class(changed: MachineInfo) -> None:
    assert changed.node_class.fingerprint != NODE.node_class.fingerprint


@pytest.mark.parametrize(
    ("memtotal_gib", "installed_gib"),
    [(23.54, 24), (15.6, 16), (187.5, 192), (251.6, 256), (376.0, 384), (503.4, 512)],
)
def test_memory_rounds_up_to_the_installed_size(memtotal_gib: float, installed_gib: int) -> None:
    """MemTotal is the installed memory less what the kernel reserves: never above it."""
    assert round_memory(int(memtotal_gib * GiB)) == installed_gib * GiB


def test_isa_features_are_per_architecture() -> None:
    """x86 ``sme`` is memory encryption and ``smep`` a protection bit; aarch64 ``sme`` is
    the matrix extension."""
    x86 = ["fpu", "sme", "smep", "avx2", "md_clear", "hypervisor", "pni"]
    assert isa_features("x86_64", x86) == ("avx2", "pni")
    arm = ["fp", "asimd", "evtstrm", "cpuid", "sve", "sve2", "sme", "ssbs", "paca"]
    assert isa_features("aarch64", arm) == ("asimd", "fp", "sme", "sve", "sve2")
    assert isa_features("ppc64le", x86 + arm) == ()


def test_the_slurm_node_name_is_the_host(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two Slurm nodes emulated on one computer share its hostname, not their node names."""
    monkeypatch.setenv("SLURMD_NODENAME", "n1")
    assert node_name() == "n1"
    one = dataclasses.replace(NODE, hostname=node_name())
    monkeypatch.setenv("SLURMD_NODENAME", "n2")
    two = dataclasses.replace(NODE, hostname=node_name())
    assert one.node_class == two.node_class and one.fingerprint != two.fingerprint
    monkeypatch.delenv("SLURMD_NODENAME")
    assert node_name() == detect_machine().hostname


def _migration() -> ModuleType:
    spec = importlib.util.spec_from_file_location("migration_0006", MIGRATION)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    "machine",
    [NODE, after_update(NODE), _with_cache(NODE, 2, 1 << 20), detect_machine()],
    ids=["node", "updated", "small-L2", "this-machine"],
)
def test_migration_0006_derives_the_class_as_the_code_does(machine: MachineInfo) -> None:
    """The migration keeps its own copy of the formula; both must agree on a stored row."""
    row = SimpleNamespace(**machine.to_dict())
    assert _migration()._class_fields(row) == class_fields(machine.to_dict())
