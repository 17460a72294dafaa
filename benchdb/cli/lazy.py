"""Commands that load on demand, so a command pays only for its own imports.

The commands' modules pull in scipy, matplotlib, pandas, alembic or mpi4py;
importing all of them for every invocation made `benchdb predict` take
seconds before it did any work (the aim is < 1 s from a cold start).
:class:`LazyGroup` lists the commands from a table and imports a command's
module only when that command runs (or its own ``--help`` is asked for).
While the root ``--help`` is being formatted it hands typer's help renderer
a light :class:`typer.core.TyperCommand` carrying the table's one-line help
instead.  Only typer's public names are used (typer vendors click privately).
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import typer
from rich.emoji import Emoji
from rich.markup import escape
from typer.core import TyperCommand

from ..bounds import MAX_INT64, fits_int64
from .groups import HelpGroup


@dataclass(frozen=True)
class LazyCommand:
    """Where a command lives: ``benchdb.cli.<module>.<attribute>``.

    The attribute is a :class:`typer.Typer` (a command group) or a function
    (a single command).
    """

    module: str
    attribute: str
    help: str
    panel: str

    def load(self, name: str) -> Any:
        target = getattr(importlib.import_module(f"benchdb.cli.{self.module}"), self.attribute)
        if isinstance(target, typer.Typer):
            command = typer.main.get_group(target)
        else:
            single = typer.Typer(add_completion=False)
            single.command(name)(target)
            command = typer.main.get_command(single)
        command.name = name
        for each in _commands(command):
            literal_help(each)
            if getattr(each, "commands", None) is None:
                bounded(each)
        return command

    def listing(self, name: str) -> TyperCommand:
        """What the root ``--help`` shows: name and one-line help, nothing imported."""
        return TyperCommand(name, help=self.help, short_help=self.help, rich_help_panel=self.panel)


class LazyGroup(HelpGroup):
    """A typer group whose subcommands come from :data:`commands` on demand."""

    commands_table: dict[str, LazyCommand] = {}  # noqa: RUF012 (set by make_lazy_group)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._listing = False

    def list_commands(self, ctx: Any) -> list[str]:
        return [*super().list_commands(ctx), *self.commands_table]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        entry = self.commands_table.get(cmd_name)
        if entry is None:
            return super().get_command(ctx, cmd_name)
        return entry.listing(cmd_name) if self._listing else entry.load(cmd_name)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


def _commands(command: Any) -> Iterator[Any]:
    """``command`` and, in a group, every command under it."""
    yield command
    for sub in getattr(command, "commands", {}).values():
        yield from _commands(sub)


def bounded(command: Any) -> None:
    """Make ``command`` refuse an integer option or argument that a 64-bit column cannot
    hold, as a usage error, before it runs.

    typer parses integers into Python's unbounded ``int``; one beyond int64 would fail
    in the database or numpy after the command had started (and, for some, written).
    """
    invoke = command.invoke

    def checked(ctx: Any) -> Any:
        for param in command.params:
            given = ctx.params.get(param.name)
            for value in given if isinstance(given, list | tuple) else [given]:
                if isinstance(value, int) and not fits_int64(value):
                    raise typer.BadParameter(
                        f"{value} is more than a 64-bit integer holds (at most {MAX_INT64})",
                        ctx=ctx,
                        param=param,
                    )
        return invoke(ctx)

    command.invoke = checked


_EMOJI_CODE = re.compile(r":\S*?:")  # what rich's markup takes for an emoji code
_BREAK = "[none][/none]"  # an empty span: rich's markup shows nothing for it


_OWN_LINE = re.compile(r"\s|[*-] |\d+\. ")  # an indented line (an example), a list item


def flowing(text: str) -> str:
    """``text`` with the line breaks inside its paragraphs taken out, so that rich fills
    each paragraph to the terminal's width.  Typer's rich mode keeps a docstring's line
    breaks, and where a source line was as wide as the terminal its last word was left
    alone on a line.  A line that starts indented or as a list item keeps its break, and
    so does a paragraph marked ``\\b``."""
    paragraphs = []
    for paragraph in inspect.cleandoc(text).split("\n\n"):
        lines: list[str] = []
        for line in paragraph.split("\n"):
            if lines and not paragraph.startswith("\b") and not _OWN_LINE.match(line):
                lines[-1] = f"{lines[-1].rstrip()} {line}"
            else:
                lines.append(line)
        paragraphs.append("\n".join(lines))
    return "\n\n".join(paragraphs)


def literal(text: str) -> str:
    """``text`` for rich markup, shown as written (:func:`flowing`): a ``[name]`` that rich
    would take for a style tag (a spec's ``[parallel]`` section) is escaped, and every
    ``:name:`` that rich would draw as an emoji (``A:B:N``, ``:b:``) is split by an empty
    span, as rich looks for codes within each span of plain text."""
    return _EMOJI_CODE.sub(
        lambda m: m[0] if Emoji.replace(m[0]) == m[0] else f":{_BREAK}{m[0][1:]}",
        escape(flowing(text)),
    )


def literal_help(command: Any) -> None:
    """``command``'s help and its options' help shown as written, where typer renders them
    as rich markup, which draws emoji codes (older typer, 0.15 for one, renders them as plain
    text unless a markup mode is set, and would show the empty spans)."""
    if getattr(command, "rich_markup_mode", None) not in ("rich", "markdown"):
        return
    for owner, field in [(command, "help"), (command, "short_help"), (command, "epilog")] + [
        (param, "help") for param in command.params
    ]:
        if getattr(owner, field, None):
            setattr(owner, field, literal(getattr(owner, field)))


def make_lazy_group(table: dict[str, LazyCommand]) -> type[LazyGroup]:
    """A :class:`LazyGroup` subclass bound to ``table``."""
    return type("BenchdbGroup", (LazyGroup,), {"commands_table": table})
