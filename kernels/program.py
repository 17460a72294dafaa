"""A user's program as a benchmark: built once, run once per sample, its own timings read.

The program times its loops itself, inside its time step (paper 003,
section V), and prints them in the line protocol of :mod:`.protocol`; each
call of :meth:`ProgramPrepared.run` is one run of the program with ``{reps}``
timed repetitions (or of several copies at once: a populated node), so a
sample never includes the program's start-up, allocation or warm-up.  The
kernels' ``source_hash`` covers the spec file and the binary: rebuilt code or
an edited spec is a new version of every kernel.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import IO

from .api import ChildSchedstat, KernelError, KernelInfo, PointFailure, Shape, Verification
from .geometry import Geometry, itemsize
from .protocol import ProgramOutput, ProtocolError, parse_output
from .spec import ProgramSpec

_MAX_POLL_MS = 2**31 - 1  # poll(2) takes an int of milliseconds: 24 days
CHECK_EXTENT = 16  # the preflight run's extent (or min_extent where that is larger)
BUILD_TIMEOUT_S = 1800.0


def source_hash(spec: ProgramSpec) -> str:
    """sha256 of the spec file and of the binary, if the spec names one."""
    digest = hashlib.sha256(spec.text)
    if spec.binary is not None:
        try:
            digest.update(spec.binary.read_bytes())
        except OSError as exc:
            raise KernelError(
                f"cannot read binary {spec.binary} of program {spec.name} ({exc.strerror}); "
                "build it (the spec's build command) or fix [program] binary"
            ) from None
    return digest.hexdigest()


def tools_env(**extra: str) -> dict[str, str]:
    """The environment of a program's build and runs: this one, with this Python's
    executables' folder first on PATH, where ``pip install mpich`` puts the MPI
    compiler wrappers and ``mpiexec`` that the project's own MPI runs use, so that a
    program is built and launched with the same MPI as the communication benchmarks
    measured, virtualenv activated or not."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return {**os.environ, "PATH": path, **extra}


def build(spec: ProgramSpec) -> None:
    """Run the spec's build command in its workdir; KernelError with its last words if it fails."""
    if spec.build is None:
        return
    try:
        done = subprocess.run(
            spec.build,
            shell=True,
            cwd=spec.workdir,
            env=tools_env(),
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        raise KernelError(
            f"build command {spec.build!r} of program {spec.name} ran past "
            f"{BUILD_TIMEOUT_S:g} s; build it by hand, then collect"
        ) from None
    if done.returncode != 0:
        raise KernelError(
            f"build command {spec.build!r} of program {spec.name} failed with exit status "
            f"{done.returncode}: {cause(done.stderr or done.stdout)}; fix the build"
        )


def cause(text: str) -> str:
    """The line of a failure's output that names its cause: the first that says error (a
    compiler's first error, a Fortran runtime error; not 'compilation terminated.' or a
    backtrace after it), else the last."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    named = [line for line in lines if _ERROR.search(line)]
    return (named or lines or ["(no output)"])[0 if named else -1]


_ERROR = re.compile(r"\berror\b", re.IGNORECASE)


def exit_status(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit status {returncode}"


@dataclass(frozen=True)
class CommandResult:
    """A finished command: its standard output, and the scheduler's account of it."""

    stdout: str
    schedstat: ChildSchedstat | None


def run_command(
    argv: list[str], cwd: Path, env: Mapping[str, str], timeout: float
) -> CommandResult:
    """Run ``argv`` to the end; its standard output and schedstat, or
    :class:`PointFailure` saying why it did not start, ran past ``timeout`` seconds (the
    spec's) or failed (:func:`run_commands` with one command)."""
    return run_commands([argv], cwd, env, timeout)[0]


def run_commands(
    argvs: Sequence[list[str]],
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    cpus: Sequence[int] = (),
) -> list[CommandResult]:
    """Start every command of ``argvs`` at once and run them to the end; each one's
    standard output and schedstat, or :class:`PointFailure` saying why one did not
    start, ran past ``timeout`` seconds (the spec's) or failed.  ``cpus``: pin command
    ``i`` to CPU ``cpus[i]`` (a populated node's ranks, one a core).

    Each command runs in its own process group, so a timeout stops it and anything it
    started (an ``mpiexec`` and its ranks).  Their output goes to temporary files, so
    that nothing has to read it while they run: each process is waited for without
    being reaped, and its schedstat read while it is a zombie (its run-queue delay is
    gone once it is reaped).
    """
    deadline = time.monotonic() + timeout
    with contextlib.ExitStack() as stack:
        files = [
            (
                stack.enter_context(tempfile.TemporaryFile()),
                stack.enter_context(tempfile.TemporaryFile()),
            )
            for _ in argvs
        ]
        procs: list[subprocess.Popen] = []
        stack.callback(_stop, procs)  # a failure below leaves nothing running
        for i, (argv, (out, err)) in enumerate(zip(argvs, files, strict=True)):
            try:
                proc = subprocess.Popen(
                    argv, cwd=cwd, env=dict(env), stdout=out, stderr=err, start_new_session=True
                )
            except OSError as exc:
                raise PointFailure(f"cannot start {argv[0]!r}: {exc.strerror}") from None
            procs.append(proc)
            if cpus:
                with contextlib.suppress(OSError):  # it may have ended just now
                    os.sched_setaffinity(proc.pid, {cpus[i]})
        schedstats = []
        for proc in procs:
            if not _exited(proc, max(0.0, deadline - time.monotonic())):
                raise PointFailure(f"timed out after {timeout:g} s (the spec's timeout)")
            # reaped already where pidfd_open is missing: its pid may be another process's now
            schedstats.append(_zombie_schedstat(proc.pid) if proc.returncode is None else None)
        results = []
        for proc, (out, err), schedstat in zip(procs, files, schedstats, strict=True):
            proc.wait()
            stdout, stderr = _text(out), _text(err)
            if proc.returncode != 0:
                raise PointFailure(
                    f"{exit_status(proc.returncode)}: {cause(stderr if stderr.strip() else stdout)}"
                )
            results.append(CommandResult(stdout, schedstat))
        return results


def _stop(procs: Sequence[subprocess.Popen]) -> None:
    """Kill the process group of every command still running, and reap them all."""
    for proc in procs:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):  # it may have ended just now
                os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _exited(proc: subprocess.Popen, timeout: float) -> bool:
    """Whether ``proc`` exited within ``timeout`` seconds, left unreaped where the
    operating system allows (``pidfd_open``: Linux 5.3); else reaped."""
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        return True
    try:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        return bool(poller.poll(min(timeout * 1000, _MAX_POLL_MS)))
    finally:
        os.close(pidfd)


def _zombie_schedstat(pid: int) -> ChildSchedstat | None:
    """The schedstat of exited, unreaped process ``pid``; None if it was reaped or the
    kernel keeps none."""
    try:
        on_cpu, delay = Path(f"/proc/{pid}/schedstat").read_text().split()[:2]
    except (OSError, ValueError):
        return None
    return ChildSchedstat(int(on_cpu) * 1e-9, int(delay) * 1e-9)


def _text(f: IO[bytes]) -> str:
    f.seek(0)
    return f.read().decode(errors="replace")


def program_argv(
    spec: ProgramSpec, shape: Shape, repetitions: int, precision: str, threads: int
) -> list[str]:
    """The spec's command for one run at ``shape``, its placeholders filled."""
    values = {
        **spec.layout.named(shape),
        "reps": repetitions,
        "precision": precision,
        "threads": threads,
        "binary": spec.binary or "",
    }
    return [arg.format(**values) for arg in spec.command]


def program_env(threads: int) -> dict[str, str]:
    return tools_env(OMP_NUM_THREADS=str(threads))


def read_output(spec: ProgramSpec, stdout: str) -> ProgramOutput:
    """What a run reported; :class:`PointFailure` if it breaks the protocol or its own
    check failed."""
    try:
        output = parse_output(stdout, [loop.name for loop in spec.loops])
    except ProtocolError as exc:
        raise PointFailure(f"output breaks the protocol: {exc}") from None
    if output.check_failed is not None:
        raise PointFailure(f"self-check failed: {output.check_failed}")
    return output


@dataclass
class ProgramPrepared:
    """One shape of a program, after its first run (one repetition, for the checksum).

    ``copies`` > 1: every run starts that many copies of the program at once on the
    same shape, copy ``i`` pinned to CPU ``cpus[i]`` where given (a populated node,
    paper 001 section 4); a run's loop times are the mean over the copies, its
    schedstat the copies' CPU time added and the longest run-queue delay among them
    (a sample is as disturbed as its most delayed copy).  The copies run the same
    input, so they must report the same checksum.
    """

    bench: ProgramBenchmark
    shape: Shape
    precision: str
    threads: int
    footprint_bytes: int
    copies: int = 1
    cpus: tuple[int, ...] = ()
    first: ProgramOutput = field(init=False)
    _schedstat: ChildSchedstat | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.first = self._run(1)

    def _run(self, repetitions: int) -> ProgramOutput:
        spec = self.bench.spec
        argv = program_argv(spec, self.shape, repetitions, self.precision, self.threads)
        done = run_commands(
            [argv] * self.copies, spec.workdir, program_env(self.threads), spec.timeout, self.cpus
        )
        outputs = [read_output(spec, d.stdout) for d in done]
        checksums = {o.checksum for o in outputs}
        if len(checksums) > 1:
            raise PointFailure(
                f"{self.copies} copies ran the same input and reported checksums "
                f"{sorted(checksums, key=str)}: the result is not reproducible"
            )
        seen = [d.schedstat for d in done]
        self._schedstat = None
        if all(seen):
            self._schedstat = ChildSchedstat(
                sum(s.on_cpu_s for s in seen if s), max(s.run_delay_s for s in seen if s)
            )
        times = {k: sum(o.times[k] for o in outputs) / self.copies for k in outputs[0].times}
        return replace(outputs[0], times=times)

    def last_schedstat(self) -> ChildSchedstat | None:
        return self._schedstat

    def run(self, repetitions: int) -> dict[str, float]:
        """One run with ``repetitions`` timed repetitions; seconds per kernel over them.

        Its checksum must equal the first run's: the program's result after its
        warm-up may not depend on the repetition count or on the run.
        """
        output = self._run(repetitions)
        if output.checksum != self.first.checksum:
            raise PointFailure(
                f"checksum {output.checksum!r} differs from the first run's "
                f"{self.first.checksum!r} at the same shape: the result is not reproducible, "
                "or the checksum depends on the repetition count"
            )
        return {f"{self.bench.name}.{loop}": t for loop, t in output.times.items()}

    def checksum(self) -> float | None:
        return self.first.checksum

    def reported_seconds(self, times: Mapping[str, float]) -> float:
        """All the loop times the run reported, added (an enclosing loop, such as a
        whole step, counts again, as the wall clock of a built-in's timed steps does)."""
        return sum(times.values())


@dataclass(frozen=True)
class ProgramBenchmark:
    """A :class:`~.api.Benchmark` backed by a user's program (``benchdb collect --program``);
    ``copies`` > 1 runs that many copies at once, copy ``i`` pinned to ``cpus[i]`` where
    given (``app calibrate --program``: :class:`ProgramPrepared`).

    The CPUs are chosen by whoever makes the copies, before a sweep starts: while it
    measures a point the sweep pins its own process to the point's thread count
    (:func:`benchdb.collectors.pinning.pinned`), so the CPUs it may use then are one,
    and copies left to inherit that would all share it.
    """

    spec: ProgramSpec
    source_hash: str
    copies: int = 1
    cpus: tuple[int, ...] = ()

    @property
    def name(self) -> str:
        return self.spec.name

    @cached_property
    def kernels(self) -> tuple[KernelInfo, ...]:
        return tuple(
            KernelInfo(
                name=f"{self.name}.{loop.name}",
                family=self.name,
                ndim=self.ndim,
                flops_per_point=loop.flops,
                loads_per_point=loop.loads,
                stores_per_point=loop.stores,
                arrays=self.spec.layout.arrays or 0,
                description=loop.description or f"loop {loop.name} of program {self.name}",
                extra={"program": str(self.spec.path), "dtypes": list(self.spec.precisions)},
                origin="program",
                source_hash=self.source_hash,
                layout=loop.layout,
            )
            for loop in self.spec.loops
        )

    @cached_property
    def geometry(self) -> Geometry:
        return self.spec.layout.geometry()

    @property
    def ndim(self) -> int:
        return self.spec.layout.ndim

    @property
    def precisions(self) -> tuple[str, ...]:
        return self.spec.precisions

    @property
    def max_threads(self) -> int | None:
        return None if self.spec.threaded else 1

    @property
    def check_shape(self) -> Shape:
        return (max(CHECK_EXTENT, self.spec.layout.min_extent),) * self.ndim

    def footprint_bytes(self, shape: Shape, precision: str) -> int:
        return self.geometry.footprint_bytes(shape, precision)

    def kernel_points(self, shape: Shape) -> dict[str, int]:
        shape = self.geometry.validate(shape)
        return {
            k.name: int(loop.layout.points(shape))
            for k, loop in zip(self.kernels, self.spec.loops, strict=True)
        }

    def prepare(self, shape: Shape, precision: str, threads: int) -> ProgramPrepared:
        """Run the program once on ``shape`` with one repetition (raises PointFailure)."""
        shape = self.geometry.validate(shape)
        itemsize(precision)
        return ProgramPrepared(
            self,
            shape,
            precision,
            threads,
            self.footprint_bytes(shape, precision),
            self.copies,
            self.cpus,
        )

    def verify(self, precision: str, threads: int) -> Verification:
        """Run the program once at :attr:`check_shape`; KernelError naming the failure."""
        shape = self.check_shape
        for loop in self.spec.loops:
            loop.layout.check(shape, itemsize(precision))
        try:
            prepared = self.prepare(shape, precision, threads)
        except PointFailure as exc:
            raise KernelError(
                f"program {self.name} failed its first run at {'x'.join(map(str, shape))}: "
                f"{exc.reason}; fix the program or its spec (docs/programs.md)"
            ) from None
        check = "its own check passed" if prepared.first.checked else "it reports no check"
        return Verification(self.name, shape, precision, threads, f"ran; {check}")
