"""Two loops of ocean models, declared for benchdb (docs/plugins.md).

Installed, the entry point ``ocean`` in group ``benchdb.kernels`` names this
module, and benchdb finds its kernels as ``ocean.upwind`` and ``ocean.columns``.
"""

from .advection import UPWIND
from .columns import COLUMNS

BENCHDB_PLUGIN = "ocean"  # the name --plugin benchdb_ocean gives too
BENCHDB_KERNELS = [UPWIND, COLUMNS]
