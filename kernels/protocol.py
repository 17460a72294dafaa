"""The line protocol a user's program prints its own timings in (version 1).

Documented for users in ``docs/programs.md``.  A line whose first word is
``BENCHDB`` belongs to the protocol; every other line is the program's own
business and is ignored::

    BENCHDB time <loop> <seconds>      once for every loop the spec declares
    BENCHDB checksum <number>          optional, at most once
    BENCHDB check pass                 optional, at most once
    BENCHDB check fail <reason...>

and, in a whole parallel run (the spec's ``[parallel]`` section), instead of
the ``time`` lines::

    BENCHDB rank <r> <part> <seconds>  for every rank r and declared part

where the parts are ``total`` (the rank's wall time of the timed steps) and
optionally ``loops`` and ``exchanges`` (of which in its loops and its halo
exchanges), so that a miss of the whole-run model can be placed, and ``cpu``
(the rank's CPU time over the timed steps: less than ``total`` where other
processes held its core).

``seconds`` is the time spent in ``<loop>`` summed over the run's timed
repetitions, as the paper's timers around each loop inside the time step
measured it (paper 003, section V).  Numbers may use a Fortran ``D``
exponent, or none where Fortran drops it for three exponent digits
(``1.2345-100``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

MARK = "BENCHDB"
_BARE_EXPONENT = re.compile(r"([+-]?(?:\d+\.?\d*|\.\d+))([+-]\d+)")  # Fortran's 1.2345-100


class ProtocolError(ValueError):
    """The program's output breaks the protocol; the message says which line and why."""


@dataclass(frozen=True)
class ProgramOutput:
    """What one run reported."""

    times: dict[str, float]  # loop -> seconds over the run's timed repetitions
    checksum: float | None
    check_failed: str | None  # the reason, if the program's own check failed
    checked: bool  # the program reported a check (pass or fail)


def _number(text: str, where: str, what: str) -> float:
    bare = _BARE_EXPONENT.fullmatch(text)
    try:
        if bare:
            return float(f"{bare[1]}e{bare[2]}")
        return float(text.replace("D", "E").replace("d", "e"))
    except ValueError:
        raise ProtocolError(f"{where}: {what} {text!r} is not a number") from None


def _protocol_lines(text: str) -> Iterator[tuple[str, list[str]]]:
    """The protocol lines of ``text``: where (line number and text, quoted so that the user
    sees what was wrong) and the words."""
    for line_no, line in enumerate(text.splitlines(), start=1):
        words = line.split()
        if words and words[0] == MARK:
            yield f"line {line_no} ({line.strip()!r})", words


class _Verdicts:
    """The lines every run may print: at most one checksum and one check."""

    def __init__(self) -> None:
        self.checksum: float | None = None
        self.check: str | None = None
        self.failed: str | None = None

    def take(self, where: str, words: list[str]) -> bool:
        """Read a checksum or check line; False for any other kind."""
        kind = words[1] if len(words) > 1 else ""
        if kind == "checksum":
            if len(words) != 3:
                raise ProtocolError(f"{where}: write 'BENCHDB checksum <number>'")
            if self.checksum is not None:
                raise ProtocolError(f"{where}: a second checksum line")
            self.checksum = _number(words[2], where, "checksum")
        elif kind == "check":
            verdict = words[2] if len(words) > 2 else ""
            if verdict not in ("pass", "fail") or (verdict == "pass" and len(words) > 3):
                raise ProtocolError(
                    f"{where}: write 'BENCHDB check pass' or 'BENCHDB check fail <reason>'"
                )
            if self.check is not None:
                raise ProtocolError(f"{where}: a second check line")
            self.check = verdict
            if verdict == "fail":
                self.failed = " ".join(words[3:]) or "no reason given"
        else:
            return False
        return True


def _seconds(where: str, what: str, text: str) -> float:
    seconds = _number(text, where, "time")
    if not (math.isfinite(seconds) and seconds >= 0):
        raise ProtocolError(
            f"{where}: time {text} of {what} is not a finite, non-negative number of seconds"
        )
    return seconds


def parse_output(text: str, loops: Sequence[str]) -> ProgramOutput:
    """The protocol lines of ``text``, checked against the declared ``loops``."""
    times: dict[str, float] = {}
    verdicts = _Verdicts()
    for where, words in _protocol_lines(text):
        if verdicts.take(where, words):
            continue
        if words[1:2] != ["time"]:
            raise ProtocolError(
                f"{where}: unknown protocol line; BENCHDB lines are 'time', 'checksum' or 'check'"
            )
        if len(words) != 4:
            raise ProtocolError(f"{where}: write 'BENCHDB time <loop> <seconds>'")
        loop = words[2]
        if loop not in loops:
            raise ProtocolError(
                f"{where}: loop {loop!r} is not declared in the spec "
                f"(declared: {', '.join(loops)}); add a [loops.{loop}] table or stop "
                "printing it"
            )
        if loop in times:
            raise ProtocolError(f"{where}: loop {loop!r} is timed twice")
        times[loop] = _seconds(where, repr(loop), words[3])
    missing = [loop for loop in loops if loop not in times]
    if missing:
        raise ProtocolError(
            f"no 'BENCHDB time' line for loop(s) {', '.join(missing)}; the program must print "
            "one for every loop the spec declares"
        )
    return ProgramOutput(times, verdicts.checksum, verdicts.failed, verdicts.check is not None)


@dataclass(frozen=True)
class RunOutput:
    """What one whole parallel run reported: per rank, seconds of each part."""

    parts: tuple[dict[str, float], ...]  # rank -> part (total, loops, ...) -> seconds
    checksum: float | None  # the final state's digest
    check_failed: str | None
    checked: bool


def parse_run_output(text: str, ranks: int, parts: Sequence[str]) -> RunOutput:
    """The protocol lines of a whole run on ``ranks`` ranks: ``BENCHDB rank <r> <part>
    <seconds>`` for every rank and every declared part (``total`` among them), and the
    checksum and check lines."""
    seen: list[dict[str, float]] = [{} for _ in range(ranks)]
    verdicts = _Verdicts()
    for where, words in _protocol_lines(text):
        if verdicts.take(where, words):
            continue
        if words[1:2] != ["rank"]:
            raise ProtocolError(
                f"{where}: unknown protocol line in a whole run; BENCHDB lines are "
                "'rank', 'checksum' or 'check'"
            )
        if len(words) != 5 or not words[2].isdigit():
            raise ProtocolError(f"{where}: write 'BENCHDB rank <rank> <part> <seconds>'")
        rank, part = int(words[2]), words[3]
        if rank >= ranks:
            raise ProtocolError(f"{where}: rank {rank} is not one of the run's {ranks} ranks")
        if part not in parts:
            raise ProtocolError(
                f"{where}: part {part!r} is not declared (declared: {', '.join(parts)}); "
                "add it to [parallel] reports or stop printing it"
            )
        if part in seen[rank]:
            raise ProtocolError(f"{where}: rank {rank}'s {part} is given twice")
        seen[rank][part] = _seconds(where, f"rank {rank}'s {part}", words[4])
    missing = [f"{r}:{p}" for r in range(ranks) for p in parts if p not in seen[r]]
    if missing:
        raise ProtocolError(
            f"no 'BENCHDB rank' line for rank:part {', '.join(missing[:4])}"
            f"{' ...' if len(missing) > 4 else ''}; a whole run must print every declared part "
            "of every rank"
        )
    return RunOutput(tuple(seen), verdicts.checksum, verdicts.failed, verdicts.check is not None)
