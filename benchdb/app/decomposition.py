"""Domain decompositions of a global M x N grid over px x py MPI ranks.

POP (paper 001, section 3, eq. 6) assigns one block per process on a
Cartesian px x py grid; the block size sets both the per-process footprint
(which the lookup of paper 003 eq. 9 needs) and the halo message sizes
(paper 001 eq. 8).  Here every block must be the same size: a decomposition
must divide the grid exactly, so that every rank runs the same loops on the
same local shape.  Pure Python: the prediction path imports it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import UserError

_DECOMP = re.compile(r"^\s*(\d+)\s*[xX]\s*(\d+)\s*$")


@dataclass(frozen=True, order=True)
class Decomposition:
    """``px`` ranks along the first (contiguous, i) axis, ``py`` along the second (j)."""

    px: int
    py: int

    @property
    def ranks(self) -> int:
        return self.px * self.py

    @property
    def key(self) -> str:
        return f"{self.px}x{self.py}"

    def local_shape(self, grid: tuple[int, int]) -> tuple[int, int]:
        """Inner points (ml, nl) of every rank's block."""
        return grid[0] // self.px, grid[1] // self.py

    def origin(self, grid: tuple[int, int], coords: tuple[int, int]) -> tuple[int, int]:
        """Global index of the first inner point of the block at Cartesian ``coords``."""
        ml, nl = self.local_shape(grid)
        return coords[0] * ml, coords[1] * nl


def parse_decomposition(text: str) -> Decomposition:
    """``"2x1"`` -> Decomposition(2, 1); UserError naming the format otherwise."""
    match = _DECOMP.match(text or "")
    if not match:
        raise UserError(f"decomposition {text!r} is not PXxPY; write e.g. --decomp 2x1")
    px, py = int(match[1]), int(match[2])
    if px < 1 or py < 1:
        raise UserError(f"decomposition {text!r} has a zero extent; use positive counts, e.g. 2x1")
    return Decomposition(px, py)


def check_decomposition(
    grid: tuple[int, int], decomp: Decomposition, max_ranks: int | None = None
) -> Decomposition:
    """The decomposition, if it divides ``grid`` and fits ``max_ranks``; UserError otherwise."""
    m, n = grid
    if m % decomp.px or n % decomp.py:
        raise UserError(
            f"decomposition {decomp.key} does not divide the grid {m}x{n} "
            f"({m}/{decomp.px}, {n}/{decomp.py}); choose px dividing {m} and py dividing {n}"
        )
    if max_ranks is not None and decomp.ranks > max_ranks:
        raise UserError(
            f"decomposition {decomp.key} needs {decomp.ranks} ranks, more than the "
            f"{max_ranks} allowed; use at most {max_ranks} (or raise --max-ranks)"
        )
    return decomp


def decompositions(grid: tuple[int, int], ranks: int) -> list[Decomposition]:
    """Every px x py = ``ranks`` that divides ``grid`` (possibly none)."""
    m, n = grid
    return [
        Decomposition(px, ranks // px)
        for px in range(1, min(ranks, m) + 1)  # px divides m: no longer loop than the grid
        if ranks % px == 0 and m % px == 0 and n % (ranks // px) == 0
    ]
