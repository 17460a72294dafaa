"""Event counts of the Parallel Ocean Program (Kerbyson & Jones, paper 001).

Eq. 7: boundary exchanges in the baroclinic and barotropic phases,
``N_clinic = (nsteps − 1)·2·N_z`` and
``N_tropic = nsteps·(4 + Av_scans·(1 + 1/ncheck))``; eq. 9: single-word
global sums, ``N_sums = nsteps·(1 + Av_scans·(2 + 1/ncheck))``.  With the
"test" input of Table 2 (nsteps 20, N_z 20, Av_scans 69, ncheck 10) these give
760, 1598 and 2918.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction


@dataclass(frozen=True)
class PopInput:
    """The inputs of paper 001 Table 2 that set the event counts."""

    nx: int
    ny: int
    nz: int
    ghost: int
    nsteps: int
    ncheck: int
    av_scans: int


POP_TEST = PopInput(nx=192, ny=128, nz=20, ghost=2, nsteps=20, ncheck=10, av_scans=69)
POP_X1 = PopInput(nx=320, ny=384, nz=40, ghost=2, nsteps=50, ncheck=10, av_scans=179)


@dataclass(frozen=True)
class PopEvents:
    baroclinic_exchanges: Fraction
    barotropic_exchanges: Fraction
    global_sums: Fraction


def pop_events(p: PopInput) -> PopEvents:
    """Eq. 7 and 9, in exact arithmetic (the counts are averages over steps)."""
    inv = Fraction(1, p.ncheck)
    return PopEvents(
        baroclinic_exchanges=Fraction((p.nsteps - 1) * 2 * p.nz),
        barotropic_exchanges=p.nsteps * (4 + p.av_scans * (1 + inv)),
        global_sums=p.nsteps * (1 + p.av_scans * (2 + inv)),
    )
