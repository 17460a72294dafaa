"""The loop curves' timing context: one value type for the label measurements store."""

from __future__ import annotations

import pytest

from benchdb.app.context import PROGRAM, LoopContext


@pytest.mark.parametrize(
    ("context", "text"),
    [
        (LoopContext(), "fullstep"),
        (LoopContext(2), "fullstep:ppn2"),
        (LoopContext(16), "fullstep:ppn16"),
        (LoopContext(1, PROGRAM), "program"),
        (LoopContext(2, PROGRAM), "program:ppn2"),
    ],
)
def test_a_context_and_its_label_round_trip(context: LoopContext, text: str) -> None:
    assert str(context) == text
    assert LoopContext.parse(text) == context
    assert context.populated == (context.ranks_per_node > 1)


@pytest.mark.parametrize(
    "text",
    ["isolated", "programs", "fullstep:ppn", "fullstep:ppn1", "program:ppn02", "ppn2", ""],
)
def test_other_labels_are_not_loop_contexts(text: str) -> None:
    with pytest.raises(ValueError, match="not a loop-curve context"):
        LoopContext.parse(text)


def test_a_run_uses_the_curves_of_its_ranks_on_a_node() -> None:
    assert LoopContext.for_ranks(4) == LoopContext(4)
    assert LoopContext.for_ranks(1) == LoopContext.for_ranks(0) == LoopContext()
    assert LoopContext.for_ranks(2, PROGRAM) == LoopContext(2, PROGRAM)
    with pytest.raises(ValueError, match="at least 1"):
        LoopContext(0)
    with pytest.raises(ValueError, match="curves must be one of"):
        LoopContext(2, "isolated")
