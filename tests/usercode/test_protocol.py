"""The line protocol (docs/programs.md): what a run's output holds, and how it can fail."""

from __future__ import annotations

import pytest
from benchdb.kernels.protocol import ProtocolError, parse_output

LOOPS = ["cu", "cv"]


def test_reads_times_checksum_and_check_ignoring_other_lines() -> None:
    out = parse_output(
        "model starting\n BENCHDB checksum  0.15062480000000000D+08\n"
        "BENCHDB time cu 1.5E-03\nBENCHDB\ttime cv 2e-3\nBENCHDB check pass\nbye\n",
        LOOPS,
    )
    assert out.times == {"cu": 1.5e-3, "cv": 2e-3}
    assert out.checksum == 1.506248e7 and out.checked and out.check_failed is None
    tiny = parse_output("BENCHDB time cu 0.1234567-100\nBENCHDB time cv 1.5+002", LOOPS)
    assert tiny.times == {"cu": 0.1234567e-100, "cv": 150.0}


def test_a_failed_check_carries_its_reason() -> None:
    out = parse_output(
        "BENCHDB time cu 1\nBENCHDB time cv 1\nBENCHDB check fail mass drift 3e-2", LOOPS
    )
    assert out.check_failed == "mass drift 3e-2"


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("BENCHDB time cu 1", "no 'BENCHDB time' line for loop(s) cv"),
        ("BENCHDB time cu 1\nBENCHDB time cv 1\nBENCHDB time z 1", "'z' is not declared"),
        ("BENCHDB time cu 1\nBENCHDB time cu 2\nBENCHDB time cv 1", "timed twice"),
        ("BENCHDB time cu fast\nBENCHDB time cv 1", "is not a number"),
        ("BENCHDB time cu -1\nBENCHDB time cv 1", "finite, non-negative"),
        ("BENCHDB time cu nan\nBENCHDB time cv 1", "finite, non-negative"),
        ("BENCHDB time cu\nBENCHDB time cv 1", "BENCHDB time <loop> <seconds>"),
        ("BENCHDB checksum 1\nBENCHDB checksum 2", "second checksum"),
        ("BENCHDB check maybe", "check pass' or"),
        ("BENCHDB timing cu 1", "unknown protocol line"),
        ("warm\nBENCHDB time cu 1e-3s\nBENCHDB time cv 1", "line 2 ('BENCHDB time cu 1e-3s')"),
    ],
)
def test_broken_output_names_the_line_and_the_fix(text: str, needle: str) -> None:
    with pytest.raises(ProtocolError, match=None) as caught:
        parse_output(text, LOOPS)
    assert needle in str(caught.value)
