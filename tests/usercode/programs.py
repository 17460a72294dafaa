"""Spec files for the toy program (``toy.py`` beside this file) in a test's folder."""

from __future__ import annotations

import sys
from pathlib import Path

TOY = Path(__file__).with_name("toy.py")

LOOPS = """
[loops.triad]
flops = 2
loads = 2
stores = 1
description = "a = 0.5 c + b"

[loops.scale]
flops = 1
loads = 1
stores = 1
"""


def toy_spec(
    folder: Path,
    *args: str,
    name: str = "toy",
    timeout: float = 60,
    program: str = "",
    shape: str = 'extents = ["n"]',
    footprint: str = "arrays = 3",
    loops: str = LOOPS,
) -> Path:
    """Write ``folder/spec.toml`` for the toy program run with extra ``args``; its path."""
    command = [sys.executable, str(TOY), "{n}", "{reps}", *args]
    text = f"""format = 1

[program]
name = "{name}"
command = {command!r}
timeout = {timeout}
{program}

[shape]
{shape}

[footprint]
{footprint}
{loops}"""
    path = folder / "spec.toml"
    path.write_text(text.replace("'", '"'))
    return path
