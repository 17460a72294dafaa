"""A user kernel's shape, declared: named extents, arrays and halo, updated points.

The built-in kernels describe their shapes in code (:mod:`.geometry`).  A
user's program (spec file) or plugin declares the same facts as data --
which the database stores with the kernel, so that ``benchdb predict`` can
compute the footprint and points of any shape (paper 003 eq. 8-9) without
running or importing the user's code.  :meth:`Layout.geometry` turns the
declaration into the :class:`~.geometry.Geometry` the collectors and the
predictor share.

Footprint: ``arrays x prod(extent + halo) x itemsize`` bytes, or a ``bytes``
expression in the extents and ``itemsize``.  Updated points per repetition:
``"inner"`` (the product of the extents), ``"full"`` (the product of
``extent + halo``, the whole arrays) or an expression in the extents.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .basics import KernelError, Shape
from .expr import Expression, ExpressionError, compile_expression
from .geometry import Geometry

NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
ITEMSIZE = "itemsize"
UPDATES = ("inner", "full")


def _product(values: Sequence[Any]) -> Any:
    out: Any = 1
    for v in values:
        out = out * v
    return out


@dataclass(frozen=True)
class Layout:
    """How a user kernel's shape maps to points and bytes (see the module docstring).

    Field names are the spec file's (``[shape]``, ``[footprint]`` and a loop's
    ``updates``); an inconsistent declaration raises :class:`KernelError`
    naming the field.
    """

    extents: tuple[str, ...]
    arrays: int | None = None
    halo: tuple[int, ...] = ()
    bytes: str | None = None
    updates: str = "inner"
    contiguous: str | None = None
    min_extent: int = 1
    _bytes: Expression | None = field(default=None, init=False, repr=False, compare=False)
    _updates: Expression | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        extents = tuple(self.extents)
        object.__setattr__(self, "extents", extents)
        if not extents:
            raise KernelError("extents is empty; name one extent per dimension, e.g. ['M', 'N']")
        for name in extents:
            if not isinstance(name, str) or not NAME_RE.fullmatch(name) or name == ITEMSIZE:
                raise KernelError(
                    f"extent name {name!r} must be letters, digits and _ (not {ITEMSIZE!r})"
                )
        if len(set(extents)) != len(extents):
            raise KernelError(f"extents {list(extents)} names an extent twice")
        halo = tuple(self.halo) or (0,) * len(extents)
        object.__setattr__(self, "halo", halo)
        if len(halo) != len(extents) or not all(_is_count(h) for h in halo):
            raise KernelError(
                f"halo {list(halo)} must give one non-negative integer per extent "
                f"({', '.join(extents)}), e.g. {[1] * len(extents)}"
            )
        if (self.arrays is None) == (self.bytes is None):
            raise KernelError(
                "give the footprint either as arrays (with halo) or as a bytes expression, "
                "not both and not neither"
            )
        if self.arrays is not None and not (_is_count(self.arrays) and self.arrays > 0):
            raise KernelError(f"arrays = {self.arrays!r} must be a positive integer")
        if self.bytes is not None and any(self.halo):
            raise KernelError("halo applies to arrays; a bytes expression includes any halo")
        if self.contiguous is not None and self.contiguous not in extents:
            raise KernelError(
                f"contiguous = {self.contiguous!r} is not one of the extents ({', '.join(extents)})"
            )
        if not (_is_count(self.min_extent) and self.min_extent >= 1):
            raise KernelError(f"min_extent = {self.min_extent!r} must be a positive integer")
        try:
            if self.bytes is not None:
                object.__setattr__(
                    self, "_bytes", compile_expression(self.bytes, (*extents, ITEMSIZE))
                )
            if not isinstance(self.updates, str):
                raise ExpressionError("updates must be 'inner', 'full' or an expression")
            if self.updates not in UPDATES:
                object.__setattr__(self, "_updates", compile_expression(self.updates, extents))
        except ExpressionError as exc:
            raise KernelError(str(exc)) from None

    @property
    def ndim(self) -> int:
        return len(self.extents)

    @property
    def contiguous_axis(self) -> int | None:
        return None if self.contiguous is None else self.extents.index(self.contiguous)

    def named(self, shape: Sequence[Any]) -> dict[str, Any]:
        """The extents' values by name (ints, or numpy columns of many shapes)."""
        return dict(zip(self.extents, shape, strict=True))

    def points(self, shape: Sequence[Any]) -> Any:
        if self.updates == "inner":
            return _product(shape)
        if self.updates == "full":
            return _product([n + h for n, h in zip(shape, self.halo, strict=True)])
        assert self._updates is not None
        return self._updates(self.named(shape))

    def footprint(self, shape: Sequence[Any], itemsize: int) -> Any:
        if self._bytes is not None:
            return self._bytes({**self.named(shape), ITEMSIZE: itemsize})
        assert self.arrays is not None
        elements = _product([n + h for n, h in zip(shape, self.halo, strict=True)])
        return self.arrays * elements * itemsize

    def geometry(self) -> Geometry:
        return Geometry(
            ndim=self.ndim,
            min_extent=self.min_extent,
            points=self.points,
            elements=lambda shape: 0,
            footprint=self.footprint,
            contiguous_axis=self.contiguous_axis,
        )

    def check(self, shape: Shape, itemsize: int) -> None:
        """Refuse a declaration that gives a shape no points or no bytes."""
        points, footprint = self.points(shape), self.footprint(shape, itemsize)
        for what, value in (("updates", points), ("bytes", footprint)):
            if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
                raise KernelError(
                    f"{what} gives {value!r} at {'x'.join(map(str, shape))}; it must be a "
                    "positive number for every allowed shape (check the expression or min_extent)"
                )

    def to_json(self) -> dict[str, Any]:
        return {
            "extents": list(self.extents),
            "arrays": self.arrays,
            "halo": list(self.halo),
            "bytes": self.bytes,
            "updates": self.updates,
            "contiguous": self.contiguous,
            "min_extent": self.min_extent,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Layout:
        return cls(
            extents=tuple(data["extents"]),
            arrays=data.get("arrays"),
            halo=tuple(data.get("halo") or ()),
            bytes=data.get("bytes"),
            updates=data.get("updates", "inner"),
            contiguous=data.get("contiguous"),
            min_extent=int(data.get("min_extent", 1)),
        )


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
