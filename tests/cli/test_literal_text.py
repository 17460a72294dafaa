"""Text benchdb prints is shown as written: rich draws ``:b:`` as an emoji, so ``A:B:N`` in
a help text or an error came out as ``A🅱N``."""

from __future__ import annotations

from itertools import pairwise

import pytest
import typer

from benchdb.cli.lazy import flowing, literal, literal_help
from tests.clihelpers import benchdb


@pytest.mark.parametrize(
    "text",
    ["A:B:N", "--range a:b:10 :thumbs_up:", "10:20:30", ":b::b:", "a spec's [parallel] section"],
)
def test_markup_of_literal_text_renders_as_written(text: str) -> None:
    from rich.text import Text

    assert Text.from_markup(literal(text)).plain == text


def test_help_shows_a_range_as_written(capsys, monkeypatch) -> None:
    app = typer.Typer()

    @app.command()
    def cmd(shape_range: str = typer.Option("1:2:3", "--range", help="A:B:N, e.g. :b:")) -> None:
        """Shapes A:B:N, from the spec's [parallel] section."""

    command = typer.main.get_command(app)
    literal_help(command)
    monkeypatch.setenv("COLUMNS", "200")
    command(["--help"], prog_name="cmd", standalone_mode=False)
    out = capsys.readouterr().out
    assert (
        "Shapes A:B:N, from the spec's [parallel] section." in out and "A:B:N, e.g. :b:" in out
    ), out


def test_a_commands_help_names_the_specs_section() -> None:
    proc = benchdb("app", "calibrate", "--help")
    assert proc.returncode == 0 and "with a [parallel] section" in proc.stdout, proc.stdout


def test_an_error_shows_a_range_as_written(tmp_path) -> None:
    proc = benchdb("predict", "-k", "shallow.cu", "--db", f"sqlite:///{tmp_path / 'x.sqlite'}")
    assert proc.returncode == 2 and "--range A:B:N" in proc.stderr, proc.stderr


def test_paragraphs_flow_and_examples_and_lists_keep_their_lines() -> None:
    text = """First line.

    A paragraph written
    over three
    lines.

      benchdb collect --quick
      benchdb predict

    * an item
    * another
      that goes on
    1. first

    \bkept
    as written"""
    assert flowing(text).split("\n\n") == [
        "First line.",
        "A paragraph written over three lines.",
        "  benchdb collect --quick\n  benchdb predict",
        "* an item\n* another\n  that goes on\n1. first",
        "\bkept\nas written",
    ]


@pytest.mark.parametrize("command", [("collect",), ("app", "calibrate"), ("ab",)])
def test_help_fills_its_paragraphs_at_80_columns(command: tuple[str, ...]) -> None:
    # a docstring line as wide as the terminal used to leave its last word alone on a line
    proc = benchdb(*command, "--help", env={"COLUMNS": "80"})
    prose = proc.stdout.split("Examples:")[0].splitlines()[3:]  # after the usage line
    for line, following in pairwise(prose):
        # a line that ends a sentence may end its paragraph (older typer leaves no blank
        # line between paragraphs): only the lines within a sentence must be full
        ends = line.rstrip().endswith((".", ":", ";", ")"))
        if line.strip() and following.strip() and not following.startswith("   ") and not ends:
            assert len(line.rstrip()) + 1 + len(following.split()[0]) > 78, (line, following)
