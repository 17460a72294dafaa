"""Spec files: every field checked before anything runs, each problem one message naming it."""

from __future__ import annotations

from pathlib import Path

import pytest
from benchdb.kernels.api import KernelError
from benchdb.kernels.spec import load_spec

from .programs import toy_spec


def test_a_valid_spec_gives_loops_with_their_layouts(tmp_path: Path) -> None:
    spec = load_spec(toy_spec(tmp_path, program='precisions = ["float64"]'))
    assert spec.name == "toy" and [loop.name for loop in spec.loops] == ["triad", "scale"]
    assert spec.layout.footprint((1000,), 8) == 3 * 1000 * 8
    assert spec.loops[0].flops == 2 and spec.loops[0].layout.updates == "inner"
    assert not spec.threaded and spec.precisions == ("float64",)


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"program": "colour = 3"}, "unknown field(s) colour"),
        ({"shape": 'extents = ["n"]\ncontiguous = "m"'}, "contiguous = 'm' is not one of"),
        ({"footprint": "arrays = 3\nhalo = [1, 1]"}, "halo [1, 1] must give one"),
        ({"footprint": 'arrays = 3\nbytes = "n * 8"'}, "not both"),
        ({"footprint": 'bytes = "n * open(1)"'}, "only numbers"),
        ({"footprint": 'bytes = "n.real * 8"'}, "only numbers"),
        ({"footprint": 'bytes = "m * 8"'}, "unknown name 'm'"),
        ({"name": "2toy"}, "must start with a letter"),
        ({"program": 'precisions = ["float16"]'}, "precisions"),
        ({"loops": "[loops.triad]\nflops = 2\nloads = 2"}, "lacks 'stores'"),
        ({"loops": '[loops.triad]\nflops = "two"\nloads = 2\nstores = 1'}, "wrong type"),
        ({"loops": "[loops.triad]\nflops = 2\nloads = -2\nstores = 1"}, "must not be negative"),
        ({"loops": '[loops.triad]\nflops=2\nloads=2\nstores=1\nupdates="n - k"'}, "unknown name"),
        ({"loops": "[loops]"}, "declares no loops"),
        ({"loops": ""}, "lacks 'loops'"),
    ],
)
def test_bad_specs_are_refused_naming_the_field(tmp_path: Path, change: dict, needle: str) -> None:
    with pytest.raises(KernelError, match=None) as caught:
        load_spec(toy_spec(tmp_path, **change))
    assert needle in str(caught.value) and str(tmp_path) in str(caught.value)


def test_a_command_must_pass_every_extent_and_the_repetitions(tmp_path: Path) -> None:
    path = toy_spec(tmp_path)
    path.write_text(path.read_text().replace(', "{reps}"', ""))
    with pytest.raises(KernelError, match=r"command lacks \{reps\}"):
        load_spec(path)
    path.write_text(path.read_text().replace('"{n}"', '"{m}"'))
    with pytest.raises(KernelError, match=r"placeholder \{m\} is unknown"):
        load_spec(path)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("format = 1\n[program\nname = 'x'", "is not valid TOML"),
        ("format = 2", "format = 2 is not supported"),
        ("[program]\nname = 'x'", "lacks 'format'"),
        ("format = 1\n[shape]\nextents = ['n']", "lacks 'program'"),
    ],
)
def test_unparseable_or_incomplete_files(tmp_path: Path, text: str, needle: str) -> None:
    path = tmp_path / "spec.toml"
    path.write_text(text)
    with pytest.raises(KernelError, match=None) as caught:
        load_spec(path)
    assert needle in str(caught.value)


def test_a_missing_file_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(KernelError, match="cannot read spec"):
        load_spec(tmp_path / "absent.toml")
