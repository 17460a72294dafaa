"""The environment fingerprint: software that changes results.

Versions are read from package metadata, never by importing the package, so
describing the environment does not pay for importing numba.  numba's
*actual* threading layer is only known after a parallel region has run; the
collectors pass it in, otherwise the requested layer is recorded.
"""

from __future__ import annotations

import os
import platform
import subprocess
from dataclasses import asdict, dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from .hashing import content_hash

ENV_PREFIXES = ("NUMBA_", "OMP_", "KMP_", "GOMP_", "MKL_", "OPENBLAS_", "MPICH_", "I_MPI_")
# Variables with those prefixes that cannot change a result: where numba
# would keep a cache must not make the same software a second environment.
ENV_IGNORED = frozenset({"NUMBA_CACHE_DIR"})


def _version(dist: str) -> str:
    try:
        return version(dist)
    except PackageNotFoundError:
        return "absent"


def _git(where: Path, *args: str) -> str | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(where), *args], capture_output=True, text=True, timeout=5, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def git_commit(path: Path | None = None) -> str | None:
    """benchdb's own commit (with ``-dirty``) when it runs from its checkout, else None.

    Only a work tree whose top is the folder holding the ``benchdb`` package
    counts: an installed benchdb lives in ``site-packages``, which may lie
    inside the user's own repository, whose commits are not benchdb's (each of
    them would make a new environment and stop runs from resuming).
    """
    where = (path or Path(__file__).resolve().parent.parent).resolve()
    top = _git(where, "rev-parse", "--show-toplevel")
    if top is None or Path(top).resolve() != where:
        return None
    return _git(where, "describe", "--always", "--dirty", "--abbrev=12")


@dataclass(frozen=True)
class EnvironmentInfo:
    python: str
    numpy: str
    numba: str
    llvmlite: str
    scipy: str
    mpi4py: str
    threading_layer: str
    benchdb_version: str
    git_commit: str | None
    kernel_release: str
    env_vars: dict[str, str] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def fingerprint(self) -> str:
        return content_hash(self.to_dict())


def detect_environment(
    threading_layer: str | None = None, options: dict[str, Any] | None = None
) -> EnvironmentInfo:
    """Describe the running software; ``options`` records compile options in force."""
    from . import __version__  # read from the metadata on first use (benchdb/__init__.py)

    return EnvironmentInfo(
        python=platform.python_version(),
        numpy=_version("numpy"),
        numba=_version("numba"),
        llvmlite=_version("llvmlite"),
        scipy=_version("scipy"),
        mpi4py=_version("mpi4py"),
        threading_layer=threading_layer or os.environ.get("NUMBA_THREADING_LAYER", "default"),
        benchdb_version=__version__,
        git_commit=git_commit(),
        kernel_release=platform.release(),
        env_vars={
            k: v
            for k, v in sorted(os.environ.items())
            if k.startswith(ENV_PREFIXES) and k not in ENV_IGNORED
        },
        options=dict(sorted((options or {}).items())),
    )
