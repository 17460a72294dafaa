"""Text benchdb prints is shown as written: rich draws ``:b:`` as an emoji, so ``A:B:N`` in
a help text or an error came out as ``A🅱N``."""

from __future__ import annotations

import pytest
import typer

from benchdb.cli.lazy import literal, literal_help
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
