"""Arithmetic expressions in a shape's extents, from a user's spec or plugin.

A program spec or a plugin may give its footprint or its updated points as an
expression (``"13 * (M + 1) * (N + 1) * itemsize"``).  The expression is
parsed with :mod:`ast` and only arithmetic is accepted -- numbers, the
declared names, ``+ - * / // **``, parentheses, ``min`` and ``max`` -- so a
spec file can never run code.  The compiled function works on ints and, as
the predictor needs, on numpy columns of many shapes at once.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

_BINARY: Mapping[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
}
_UNARY: Mapping[type, Callable[[Any], Any]] = {ast.USub: operator.neg, ast.UAdd: operator.pos}


def _minimum(*args: Any) -> Any:
    import numpy as np

    out = args[0]
    for a in args[1:]:
        out = np.minimum(out, a)
    return out


def _maximum(*args: Any) -> Any:
    import numpy as np

    out = args[0]
    for a in args[1:]:
        out = np.maximum(out, a)
    return out


_FUNCTIONS: Mapping[str, Callable[..., Any]] = {"min": _minimum, "max": _maximum}


class ExpressionError(ValueError):
    """The text is not an arithmetic expression in the allowed names."""


@dataclass(frozen=True)
class Expression:
    """A checked arithmetic expression; call it with the names' values."""

    text: str
    names: tuple[str, ...]
    _tree: ast.expr

    def __call__(self, values: Mapping[str, Any]) -> Any:
        return _evaluate(self._tree, values)


def compile_expression(text: str, names: Sequence[str]) -> Expression:
    """``text`` checked against ``names``; :class:`ExpressionError` saying what is wrong."""
    if not isinstance(text, str) or not text.strip():
        raise ExpressionError("an expression must be a non-empty string such as 'M * N'")
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        raise ExpressionError(f"{text!r} is not an arithmetic expression") from None
    _check(tree, text, frozenset(names))
    return Expression(text, tuple(names), tree)


def _check(node: ast.AST, text: str, names: frozenset[str]) -> None:
    allowed = ", ".join(sorted(names))
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, int | float):
            raise ExpressionError(f"{text!r}: only numbers are allowed as constants")
    elif isinstance(node, ast.Name):
        if node.id not in names:
            raise ExpressionError(f"{text!r}: unknown name {node.id!r}; use {allowed}")
    elif isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        _check(node.left, text, names)
        _check(node.right, text, names)
    elif isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        _check(node.operand, text, names)
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCTIONS
        and node.args
        and not node.keywords
    ):
        for arg in node.args:
            _check(arg, text, names)
    else:
        raise ExpressionError(
            f"{text!r}: only numbers, {allowed}, + - * / // **, parentheses, min() and "
            "max() are allowed"
        )


def _evaluate(node: ast.expr, values: Mapping[str, Any]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return values[node.id]
    if isinstance(node, ast.BinOp):
        return _BINARY[type(node.op)](_evaluate(node.left, values), _evaluate(node.right, values))
    if isinstance(node, ast.UnaryOp):
        return _UNARY[type(node.op)](_evaluate(node.operand, values))
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    return _FUNCTIONS[node.func.id](*(_evaluate(a, values) for a in node.args))
