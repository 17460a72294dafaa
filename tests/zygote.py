"""A process that has imported benchdb's heavy libraries and forks one child per CLI call.

Most of a CLI test's time was the interpreter importing SQLAlchemy, numpy, pandas, numba
and matplotlib again for every ``python -m benchdb`` (docs/findings/test-suite.md).  This
server imports them once (:data:`PRELOAD`, third-party only: benchdb's own modules are
imported afresh by every child, so a missing import in benchdb still fails) and, for each
request, forks.  The child becomes what ``subprocess.run([python, "-m", "benchdb", ...])``
would have started: standard input ``/dev/null``, standard output and error to files,
the request's environment, working directory and ``sys.path[0]``, no other descriptor;
it runs ``benchdb.__main__`` and ends as the interpreter ends a program (:func:`_end`),
never back in the server's loop.

Protocol, one JSON line each way on standard input and output: a request
``{"argv", "env", "cwd", "out", "err"}`` is answered ``{"pid": N}`` at once and
``{"status": S}`` when the child ends (``S`` as :attr:`subprocess.Popen.returncode`:
the exit code, or minus the signal).  ``python -m tests.zygote``; :mod:`tests.clihelpers`
is the client.
"""

from __future__ import annotations

import atexit
import importlib
import json
import os
import runpy
import sys
import threading
import traceback
from typing import NoReturn

PRELOAD = (
    "sqlalchemy",
    "sqlalchemy.orm",
    "sqlalchemy.dialects.sqlite",
    "sqlalchemy.dialects.postgresql",
    "psycopg",
    "alembic",
    "numpy",
    "pandas",
    "pyarrow",
    "scipy.interpolate",
    "scipy.optimize",
    "scipy.special",
    "scipy.stats",
    "numba",
    "typer",
    "rich.console",
    "rich.table",
    "platformdirs",
    "matplotlib",
    "matplotlib.figure",
    "matplotlib.backends.backend_agg",
    "plotly.graph_objects",
)
"""Dependencies whose import-time settings no test varies (none reads an environment
variable a test sets for one call); what is not here the child imports, as before."""


def _become(request: dict) -> None:
    """In the child: the process a fresh ``python -m benchdb ARGV`` would be."""
    null = os.open(os.devnull, os.O_RDONLY)
    out = os.open(request["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    err = os.open(request["err"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    for fd, target in ((null, 0), (out, 1), (err, 2)):
        os.dup2(fd, target)
    os.closerange(3, os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 1024)
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    sys.path[0] = request["cwd"]
    sys.argv = ["benchdb", *request["argv"]]


def _main() -> int:
    """Run ``python -m benchdb``; its exit status as the interpreter would give it."""
    try:
        runpy.run_module("benchdb", run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1
    except BaseException:
        traceback.print_exc()
        return 1
    return 0


def _end(code: int) -> NoReturn:
    """What the interpreter does at exit, in its order (wait for threads, atexit handlers,
    flush the standard streams), then the exit; not the teardown of every module, which
    the preloaded libraries make 0.4 s long and which nothing a user sees depends on."""
    threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os._exit(code)


def _reply(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def serve() -> None:
    for name in PRELOAD:
        importlib.import_module(name)
    _reply({"ready": True})
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _become(request)
            _end(_main())
        _reply({"pid": pid})
        _, status = os.waitpid(pid, 0)
        _reply({"status": os.waitstatus_to_exitcode(status)})


if __name__ == "__main__":
    serve()
