"""Two loops of ocean models, declared for benchdb (docs/plugins.md).

* ``ocean.upwind`` (:mod:`.advection`): first-order upwind (donor-cell) tracer
  advection on a periodic C grid, shape ``ny x nx``;
* ``ocean.columns`` (:mod:`.columns`): implicit vertical mixing, a tridiagonal
  solve per water column, shape ``nz x ny x nx``.

Installed, the entry point ``ocean`` in group ``benchdb.kernels`` names this
module; ``benchdb collect --plugin benchdb_ocean`` (with this folder's parent
on the Python path) finds the same kernels under the same names.
"""

from .advection import UPWIND
from .columns import COLUMNS

BENCHDB_PLUGIN = "ocean"  # the name without the entry point, as with --plugin benchdb_ocean
BENCHDB_KERNELS = [UPWIND, COLUMNS]
