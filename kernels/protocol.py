"""The line protocol a user's program prints its own timings in (version 1).

Documented for users in ``docs/programs.md``.  A line whose first word is
``BENCHDB`` belongs to the protocol; every other line is the program's own
business and is ignored::

    BENCHDB time <loop> <seconds>      once for every loop the spec declares
    BENCHDB checksum <number>          optional, at most once
    BENCHDB check pass                 optional, at most once
    BENCHDB check fail <reason...>

``seconds`` is the time spent in ``<loop>`` summed over the run's timed
repetitions, as the paper's timers around each loop inside the time step
measured it (paper 003, section V).  Numbers may use a Fortran ``D``
exponent, or none where Fortran drops it for three exponent digits
(``1.2345-100``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
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


def parse_output(text: str, loops: Sequence[str]) -> ProgramOutput:
    """The protocol lines of ``text``, checked against the declared ``loops``."""
    times: dict[str, float] = {}
    checksum: float | None = None
    check: str | None = None
    failed: str | None = None
    for line_no, line in enumerate(text.splitlines(), start=1):
        words = line.split()
        if not words or words[0] != MARK:
            continue
        kind = words[1] if len(words) > 1 else ""
        where = f"line {line_no} ({line.strip()!r})"  # quoted: the user sees what was wrong
        if kind == "time":
            if len(words) != 4:
                raise ProtocolError(f"{where}: write 'BENCHDB time <loop> <seconds>'")
            loop, seconds = words[2], _number(words[3], where, "time")
            if loop not in loops:
                raise ProtocolError(
                    f"{where}: loop {loop!r} is not declared in the spec "
                    f"(declared: {', '.join(loops)}); add a [loops.{loop}] table or stop "
                    "printing it"
                )
            if loop in times:
                raise ProtocolError(f"{where}: loop {loop!r} is timed twice")
            if not (math.isfinite(seconds) and seconds >= 0):
                raise ProtocolError(
                    f"{where}: time {words[3]} of {loop!r} is not a finite, "
                    "non-negative number of seconds"
                )
            times[loop] = seconds
        elif kind == "checksum":
            if len(words) != 3:
                raise ProtocolError(f"{where}: write 'BENCHDB checksum <number>'")
            if checksum is not None:
                raise ProtocolError(f"{where}: a second checksum line")
            checksum = _number(words[2], where, "checksum")
        elif kind == "check":
            verdict = words[2] if len(words) > 2 else ""
            if verdict not in ("pass", "fail") or (verdict == "pass" and len(words) > 3):
                raise ProtocolError(
                    f"{where}: write 'BENCHDB check pass' or 'BENCHDB check fail <reason>'"
                )
            if check is not None:
                raise ProtocolError(f"{where}: a second check line")
            check = verdict
            if verdict == "fail":
                failed = " ".join(words[3:]) or "no reason given"
        else:
            raise ProtocolError(
                f"{where}: unknown protocol line; BENCHDB lines are 'time', 'checksum' or 'check'"
            )
    missing = [loop for loop in loops if loop not in times]
    if missing:
        raise ProtocolError(
            f"no 'BENCHDB time' line for loop(s) {', '.join(missing)}; the program must print "
            "one for every loop the spec declares"
        )
    return ProgramOutput(times, checksum, failed, check is not None)
