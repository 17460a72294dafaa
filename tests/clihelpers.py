"""Shared helpers for CLI tests: run the real console entry point in a process of its own.

Bad input must end with exit status 2 and exactly one line on stderr, no
traceback (DESIGN.md "Conventions"); :func:`assert_user_error` checks that.
"""

from __future__ import annotations

import json
import locale
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from typer.testing import CliRunner, Result

from benchmarks.bad_inputs import obey_permissions

FORK_VAR = "BENCHDB_TEST_FORK"
"""``0``: every :func:`benchdb` call starts a fresh interpreter instead of a child of the
zygote (:mod:`tests.zygote`)."""

ROOT = Path(__file__).resolve().parents[1]


def benchdb(
    *args: str, env: dict[str, str] | None = None, timeout: float = 300, as_user: bool = False
) -> subprocess.CompletedProcess[str]:
    """``python -m benchdb ARGS`` in a process of its own, output captured as text, the
    environment this one's with ``env`` added (:func:`run_benchdb`).

    ``COLUMNS=200`` keeps rich from wrapping the prose lines (titles, notes) that
    tests look for; tables on a pipe are printed at their natural width anyway.
    ``as_user``: file permissions bind it even where the tests run as root
    (:func:`obey_permissions`).
    """
    full_env = {**os.environ, "COLUMNS": "200", **(env or {})}
    return run_benchdb(list(args), env=full_env, timeout=timeout, as_user=as_user)


def run_benchdb(
    args: list[str],
    *,
    env: dict[str, str],
    cwd: str | Path | None = None,
    timeout: float = 300,
    as_user: bool = False,
) -> subprocess.CompletedProcess[str]:
    """``subprocess.run([python, "-m", "benchdb", *args], env=env, cwd=cwd, text=True,
    capture_output=True, timeout=timeout)``, the process forked from a server that has
    imported the heavy libraries (:mod:`tests.zygote`).  ``as_user``, an ``env`` that sets
    what the interpreter reads as it starts (:data:`STARTUP_PREFIXES`), and
    ``BENCHDB_TEST_FORK=0`` start a fresh interpreter instead; ``as_user`` drops root's
    file capabilities, which takes effect at ``exec`` (:func:`obey_permissions`)."""
    argv = [sys.executable, "-m", "benchdb", *args]
    where = str(cwd) if cwd is not None else os.getcwd()
    if as_user or os.environ.get(FORK_VAR) == "0" or _zygote().read_at_start(env):
        return subprocess.run(
            argv,
            capture_output=True,
            text=True,
            env=env,
            cwd=where,
            timeout=timeout,
            preexec_fn=obey_permissions if as_user else None,
        )
    return _zygote().run(argv, args, env, where, timeout)


STARTUP_PREFIXES = ("PYTHON", "NUMBA_")
"""Variables the interpreter (``PYTHONPATH``, ...) or a preloaded library (numba's
settings) read when it starts: a call that sets one differently starts afresh."""


class _Zygote:
    """The client of one :mod:`tests.zygote` server (one per test worker process)."""

    def __init__(self) -> None:
        self.env = {**os.environ, "COLUMNS": "200"}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.zygote"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=ROOT,
            env=self.env,
        )
        self.folder = Path(tempfile.mkdtemp(prefix="benchdb-zygote-"))
        self._buffer = b""
        self._read(120)  # {"ready": true}: the libraries are imported

    def read_at_start(self, env: dict[str, str]) -> bool:
        """Whether ``env`` sets a variable of :data:`STARTUP_PREFIXES` otherwise than the
        server started with."""
        names = {k for k in (*env, *self.env) if k.startswith(STARTUP_PREFIXES)}
        return any(env.get(k) != self.env.get(k) for k in names)

    def _read(self, timeout: float | None) -> dict | None:
        """The server's next message, or None once ``timeout`` s have passed."""
        deadline = None if timeout is None else time.monotonic() + timeout
        fd = self.process.stdout.fileno()
        while b"\n" not in self._buffer:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                raise RuntimeError(f"the zygote ended (exit {self.process.wait()})")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)

    def run(
        self, argv: list[str], args: list[str], env: dict[str, str], cwd: str, timeout: float
    ) -> subprocess.CompletedProcess[str]:
        out, err = self.folder / "out", self.folder / "err"
        request = {"argv": args, "env": env, "cwd": cwd, "out": str(out), "err": str(err)}
        self.process.stdin.write((json.dumps(request) + "\n").encode())
        self.process.stdin.flush()
        pid = self._read(60)["pid"]
        reply = self._read(timeout)
        if reply is None:
            os.kill(pid, signal.SIGKILL)
            self._read(None)
            raise subprocess.TimeoutExpired(argv, timeout, out.read_bytes(), err.read_bytes())
        return subprocess.CompletedProcess(argv, reply["status"], _text(out), _text(err))


def _text(path: Path) -> str:
    """A captured stream as ``subprocess.run(text=True)`` decodes it."""
    text = path.read_bytes().decode(locale.getpreferredencoding(False))
    return text.replace("\r\n", "\n").replace("\r", "\n")


_ZYGOTE: list[_Zygote] = []


def _zygote() -> _Zygote:
    if not _ZYGOTE or _ZYGOTE[0].process.poll() is not None:
        _ZYGOTE[:] = [_Zygote()]
    return _ZYGOTE[0]


def benchdb_command(*args: str) -> list[str]:
    """The argv of :func:`benchdb`, for tests that manage the process themselves."""
    return [sys.executable, "-m", "benchdb", *args]


def assert_user_error(proc: subprocess.CompletedProcess[str], needle: str) -> None:
    """Exit 2, one line on stderr containing ``needle``, no traceback."""
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert needle in proc.stderr, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stderr


def runner() -> CliRunner:
    """A runner whose ``result.stdout`` is standard output alone, on every click typer allows.

    click 8.1 mixes standard error into ``stdout`` unless told not to; click 8.2 removed
    the switch and always keeps the two apart.
    """
    try:
        return CliRunner(mix_stderr=False)  # type: ignore[call-arg]
    except TypeError:
        return CliRunner()


def invoke(*args: str, env: dict[str, str] | None = None) -> Result:
    """Run a command in this process (no interpreter start-up: cheap, compiled code is shared).

    A :class:`~benchdb.errors.UserError` ends up in ``result.exception``; the
    exit-2 one-line contract itself is checked through :func:`benchdb`.
    """
    from benchdb.cli.app import app

    return runner().invoke(app, list(args), env=env)
