"""The command group every ``benchdb`` group is built on.

A group called with no subcommand shows its help and exits with status 2,
the status of every other usage error.  Click decides this itself, and not
the same way in every version the declared floors allow: 8.1 prints the help
and exits 0, 8.2 raises ``NoArgsIsHelpError``.  Deciding it here makes the
exit status the same on all of them.
"""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperGroup


class HelpGroup(TyperGroup):
    """A typer group that answers a bare call with its help and exit status 2."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if not args and self.no_args_is_help and not ctx.resilient_parsing:
            typer.echo(ctx.get_help(), color=ctx.color)
            raise typer.Exit(2)
        return super().parse_args(ctx, args)
