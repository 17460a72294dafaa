"""Groups of options several typer commands share, declared once as a dataclass.

A group's fields are typer options (``Annotated`` types with defaults);
:func:`option_group` lays them out on a command's command line in place of one
parameter, and hands them to the command as one object, so that the commands
neither repeat the declarations nor the code that reads them.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import MISSING, fields
from typing import Any


def option_group(name: str, cls: type) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Put the fields of dataclass ``cls`` on a typer command in place of its parameter ``name``.

    Typer sees one flat signature (each field an option, in place); the
    command gets the options as one ``cls`` in ``name``.
    """
    hints = inspect.get_annotations(cls, eval_str=True)
    group = [
        inspect.Parameter(
            f.name,
            inspect.Parameter.KEYWORD_ONLY,
            annotation=hints[f.name],
            default=inspect.Parameter.empty if f.default is MISSING else f.default,
        )
        for f in fields(cls)
    ]

    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        params: list[inspect.Parameter] = []
        for p in inspect.signature(command, eval_str=True).parameters.values():
            params += group if p.name == name else [p.replace(kind=inspect.Parameter.KEYWORD_ONLY)]

        @functools.wraps(command)
        def wrapper(**kwargs: Any) -> None:
            value = cls(**{g.name: kwargs.pop(g.name) for g in group})
            return command(**kwargs, **{name: value})

        wrapper.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        wrapper.__annotations__ = {p.name: p.annotation for p in params}
        return wrapper

    return decorate
