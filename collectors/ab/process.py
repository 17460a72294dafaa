"""A worker process as the coordinator sees it: started with its side's Python and
environment, asked one request at a time (or both sides at once: write, then read).

Each worker starts with address-space randomization off (Linux ``personality``
flag ``ADDR_NO_RANDOMIZE``, as ``setarch -R`` sets it).  Where a process's stack,
heap, arrays and compiled code land changes how fast the same code runs, with
ASLR and, less, without it (docs/findings/ab-comparison.md) -- Mytkowicz et al., "Producing Wrong
Data Without Doing Anything Obviously Wrong!" (ASPLOS 2009) measured the same
bias from the environment's size.  So both sides also get one ``PYTHONHASHSEED``
(the order of every set and dict of strings, and with it what is allocated
where) and environments of one size (:func:`environment_pads`).  Two sides
started alike then get the same layout, so the comparison measures the code, not
the draw of addresses; a change that moves the layout is measured with its
layout, as in any one build.

One layout is still one draw: the two sides' trees differ (their paths, their
plug-ins' files), and two processes of unchanged code can hold one point
several percent apart in every trial.  So a run starts several pairs of workers, each pair with
a layout of its own (:func:`layout_environment`: another hash seed and a longer
environment, alike on both sides), and the trials of a point take turns on them.

A worker that dies, or answers with something other than a JSON line, raises
:class:`WorkerDied` quoting the last line it wrote to stderr (kept in a temporary
file, so a crash says why).
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from typing import IO, Any

from benchdb.errors import UserError

from .protocol import Side, decode, encode

LAYOUT_PAD_STEP = 272
"""Characters the environment grows by from one layout to the next: a cache line and
a sixteenth of a page more, so that the stacks of successive layouts start at other
offsets within both."""
ADDR_NO_RANDOMIZE = 0x0040000  # <linux/personality.h>
_QUERY = 0xFFFFFFFF


PAD_VARIABLE = "BENCHDB_AB_PAD"


def environment_pads(sides: Sequence[Side]) -> list[int]:
    """Characters to add to each side's environment so that all are the same size.

    The environment is copied onto the top of the stack, so its size moves every
    address below it: Mytkowicz et al. changed a program's speed by up to 10 % by
    adding bytes to an unused variable.  With address randomization off, sides of
    equal environment size start their stacks alike.
    """
    sizes = [sum(len(k) + len(v) + 2 for k, v in side.env.items()) for side in sides]
    return [max(sizes) - size for size in sizes]


def layout_environment(side: Side, pad: int, layout: int) -> dict[str, str]:
    """The environment of worker pair number ``layout``'s ``side`` process: that pair's
    hash seed (the order of every dict and set of str, and with it what is allocated
    where; a side's own ``PYTHONHASHSEED`` wins), the side's variables, and
    :data:`PAD_VARIABLE` making it ``pad`` + ``layout`` x :data:`LAYOUT_PAD_STEP`
    characters longer."""
    return {
        **os.environ,
        "PYTHONHASHSEED": str(layout),
        **side.env,
        PAD_VARIABLE: "x" * (pad + layout * LAYOUT_PAD_STEP),
    }


def _no_aslr() -> None:
    """In the child before exec: keep its address space where an identical process's is.
    Where the flag cannot be set (not Linux, a seccomp filter) the worker runs as it is."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.personality(libc.personality(_QUERY) | ADDR_NO_RANDOMIZE)
    except (OSError, AttributeError):
        return


class WorkerDied(RuntimeError):
    """A side's worker ended or broke the protocol in the middle of a run."""


def check_python(side: Side) -> None:
    """UserError unless ``side``'s Python can be run (before any worker starts)."""
    if shutil.which(side.python) is None:
        raise UserError(
            f"--{side.name}-python {side.python}: no such Python; give the path of a "
            "virtualenv's python, e.g. ../base-env/bin/python"
        )


class WorkerProcess:
    """One side's worker; a context manager that stops it (``quit``, then kill)."""

    def __init__(self, side: Side, pad: int = 0, layout: int = 0) -> None:
        """``pad``: what makes the sides' environments one size (:func:`environment_pads`);
        ``layout``: which pair of workers this is (:func:`layout_environment`)."""
        self.side = side
        self._stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 (closed in close())
        self.proc = subprocess.Popen(
            side.argv(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=layout_environment(side, pad, layout),
            text=True,
            bufsize=1,
            preexec_fn=_no_aslr if sys.platform.startswith("linux") else None,
        )

    def __enter__(self) -> WorkerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def send(self, op: str, **fields: Any) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(encode({"op": op, **fields}))
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise WorkerDied(self._why()) from None

    def receive(self) -> dict[str, Any]:
        """The next reply; UserError for a reply naming bad input on this side."""
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        try:
            reply = decode(line)
        except ValueError:
            raise WorkerDied(self._why(line)) from None
        if "error" in reply:
            raise UserError(f"{self.side.name} side: {reply['error']}")
        return reply

    def ask(self, op: str, **fields: Any) -> dict[str, Any]:
        self.send(op, **fields)
        return self.receive()

    def _why(self, line: str = "") -> str:
        self.proc.poll()
        self._stderr.seek(0)
        lines = [x for x in self._stderr.read().decode(errors="replace").splitlines() if x]
        said = lines[-1] if lines else (line.strip() or "no output")
        code = self.proc.returncode
        ended = f"exited with status {code}" if code is not None else "broke the protocol"
        return f"the {self.side.name} side's worker {ended}: {said}"

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.send("quit")
                self.proc.stdin.close()  # type: ignore[union-attr]
                self.proc.wait(timeout=10)
            except (WorkerDied, OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        self._stderr.close()
