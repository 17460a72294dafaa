"""Shared helpers for CLI tests: run the real console entry point in a subprocess.

Bad input must end with exit status 2 and exactly one line on stderr, no
traceback (DESIGN.md "Conventions"); :func:`assert_user_error` checks that.
"""

from __future__ import annotations

import os
import subprocess
import sys

from typer.testing import CliRunner, Result

from benchmarks.bad_inputs import obey_permissions


def benchdb(
    *args: str, env: dict[str, str] | None = None, timeout: float = 300, as_user: bool = False
) -> subprocess.CompletedProcess[str]:
    """``python -m benchdb ARGS`` in a subprocess, output captured as text.

    ``COLUMNS=200`` keeps rich from wrapping the prose lines (titles, notes) that
    tests look for; tables on a pipe are printed at their natural width anyway.
    ``as_user``: file permissions bind it even where the tests run as root
    (:func:`obey_permissions`).
    """
    full_env = {**os.environ, "COLUMNS": "200", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "benchdb", *args],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
        preexec_fn=obey_permissions if as_user else None,
    )


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
