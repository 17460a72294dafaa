"""Machine identity: a node class (what sets performance) and a host (which node).

A host's full description (:class:`benchdb.machine.MachineInfo`) changes when
nothing that sets performance does: an OS or microcode update adds or removes
cpuinfo flags (``md_clear``, ``flush_l1d``, TSX's ``hle``/``rtm``), a new kernel
reserves a little more or less memory (MemTotal moves), and every node of a
cluster has a hostname of its own.  Hashing all of it made each update a "new
machine" and each of 500 identical nodes a machine of its own whose data never
pool.  So identity has two parts:

* the **node class** -- the hardware the paper 003 lookup depends on, hashed
  from :data:`CLASS_FIELDS` only: architecture, CPU model, sockets, cores,
  threads per core, NUMA nodes, each cache (level, type, size, line, ways,
  how many CPUs share it), the memory size rounded up to the grid
  :func:`round_memory` uses, and the ISA features code generation uses
  (:data:`ISA_FEATURES`, per architecture).  Identical nodes share it; an OS
  update keeps it.
* the **host** -- the node's name within the class: the batch scheduler's node
  name inside one of its jobs, else the hostname
  (:func:`benchdb.scheduler.node_name`).  Two nodes emulated on one computer
  share a hostname but not a node name, so they are two hosts.

Predictions, comparisons and histories pool the hosts of a class; ``--host``
narrows them to one.  Migration 0006 copies :func:`class_fields` (a migration
must not change when the code does); ``tests/db/test_node_class.py`` checks the
two agree.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .hashing import content_hash

X86_FEATURES = re.compile(
    r"""
      sse\w* | pni | ssse3           # SSE to SSE4.2 and SSE4a (pni is SSE3)
    | avx\w*                         # AVX, AVX2, every AVX-512 subset, AVX-VNNI, AVX10
    | fma4? | f16c | xop | amx\w*    # FMA3/FMA4, half-precision conversion, AMX tiles
    | bmi[12] | popcnt | abm | movbe  # scalar instructions LLVM emits (abm: LZCNT)
    """,
    re.VERBOSE,
)
AARCH64_FEATURES = re.compile(
    r"fp | asimd\w* | sve\w* | sme\w* | fphp | fcma | frint | i8mm | bf16 | atomics", re.VERBOSE
)
ISA_FEATURES = {
    "x86_64": X86_FEATURES,
    "i686": X86_FEATURES,
    "aarch64": AARCH64_FEATURES,
    "arm64": AARCH64_FEATURES,
}
"""Per architecture, the cpuinfo flags that change the code numba (LLVM, tuned to
the host CPU) generates for a loop.  x86, Linux's flag names
(arch/x86/include/asm/cpufeatures.h): the SIMD, FMA, AVX-512 and AMX families
and the scalar bit instructions.  aarch64, the Features line
(arch/arm64/kernel/cpuinfo.c): NEON (asimd), SVE, SME, half precision, dot
products, LSE atomics.  Everything else is left out: mitigations and bug
workarounds that microcode and kernel updates add (``md_clear``, ``ibrs``,
``flush_l1d``), TSX that microcode removes (``hle``, ``rtm``), and what
describes the hypervisor, the clock, memory encryption or the kernel's own view
(``hypervisor``, ``tsc_known_freq``, AMD's ``sme``, ``smep``, ``x2apic``).  The
lists are per architecture because names collide (x86 ``sme`` is memory
encryption, aarch64 ``sme`` a matrix extension).  Other architectures keep no
features: their CPU model names the ISA."""

CLASS_FIELDS = (
    "architecture",
    "cpu_model",
    "sockets",
    "cores",
    "threads_per_core",
    "numa_nodes",
    "memory_bytes",
    "caches",
    "isa_features",
)


def round_memory(nbytes: int) -> int:
    """``nbytes`` rounded up to an eighth of its power of two (2 GiB steps from 16 to
    32 GiB, 16 GiB from 128 to 256 GiB).

    MemTotal is the installed memory less what the kernel and firmware reserve,
    which moves with the kernel release by tenths of a percent to a few percent;
    the installed size is a step of this grid (16, 24, 32, 48, 64, 96, 128, 192,
    256, 384, 512 GiB ...), so MemTotal rounds up to it.
    """
    if nbytes <= 0:
        return 0
    step = 1 << max(int(nbytes).bit_length() - 4, 0)
    return -(-int(nbytes) // step) * step


def isa_features(architecture: str, flags: Iterable[str]) -> tuple[str, ...]:
    """The flags of :data:`ISA_FEATURES` for ``architecture``, sorted."""
    wanted = ISA_FEATURES.get(architecture)
    return tuple(sorted({f for f in flags if wanted and wanted.fullmatch(f)}))


def _cache(c: Mapping[str, Any]) -> dict[str, Any]:
    """A cache as the class keeps it: how many CPUs share it, not which."""
    return {
        "name": str(c["name"]),
        "level": int(c["level"]),
        "type": str(c["type"]),
        "size_bytes": int(c["size_bytes"]),
        "line_bytes": int(c["line_bytes"]),
        "associativity": int(c["associativity"]),
        "shared_by": len(c.get("shared_cpus") or ()),
    }


def class_fields(description: Mapping[str, Any]) -> dict[str, Any]:
    """The node-class fields of a machine description: a ``MachineInfo.to_dict()``, a
    stored ``machine`` row's columns, or a ``machine`` record of an export file."""
    caches = sorted(
        (_cache(c) for c in description["caches"]), key=lambda c: (c["level"], c["name"])
    )
    architecture = str(description["os"]).split()[-1]
    return {
        "architecture": architecture,
        "cpu_model": " ".join(str(description["cpu_model"]).split()),
        "sockets": int(description["sockets"]),
        "cores": int(description["cores"]),
        "threads_per_core": int(description["threads_per_core"]),
        "numa_nodes": int(description["numa_nodes"]),
        "memory_bytes": round_memory(int(description["memory_bytes"])),
        "caches": caches,
        "isa_features": list(isa_features(architecture, description["isa_flags"])),
    }


def host_fingerprint(class_fingerprint: str, host: str) -> str:
    """A host's identity: its node class and its name (two hosts of one name but of
    different hardware -- a node whose memory was upgraded -- are two hosts)."""
    return content_hash({"node_class": class_fingerprint, "host": host})


@dataclass(frozen=True)
class NodeClassInfo:
    """One node class: the fields of :data:`CLASS_FIELDS`, and their hash."""

    architecture: str
    cpu_model: str
    sockets: int
    cores: int
    threads_per_core: int
    numa_nodes: int
    memory_bytes: int
    caches: tuple[dict[str, Any], ...]
    isa_features: tuple[str, ...]

    @classmethod
    def of(cls, description: Mapping[str, Any]) -> NodeClassInfo:
        f = class_fields(description)
        return cls(**{**f, "caches": tuple(f["caches"]), "isa_features": tuple(f["isa_features"])})

    def to_dict(self) -> dict[str, Any]:
        return {
            **{k: getattr(self, k) for k in CLASS_FIELDS},
            "caches": [dict(c) for c in self.caches],
            "isa_features": list(self.isa_features),
        }

    @property
    def fingerprint(self) -> str:
        return content_hash(self.to_dict())
