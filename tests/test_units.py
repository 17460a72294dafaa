"""Human units in tables and estimates."""

from __future__ import annotations

import pytest

from benchdb.units import fmt_duration


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0.5, "500 ms"), (42, "42 s"), (99.6, "99.6 s"), (322, "5 min 22 s"), (300, "5 min"),
     (1750, "29 min 10 s"), (3900, "1 h 5 min"), (7200, "2 h")],
)  # fmt: skip
def test_a_span_reads_as_people_say_it(seconds: float, text: str) -> None:
    assert fmt_duration(seconds) == text
