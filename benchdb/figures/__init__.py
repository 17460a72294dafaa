"""benchdb's static figures (matplotlib), one function per figure, each returning a
:class:`matplotlib.figure.Figure` that :func:`save` writes as PNG or SVG.

* :mod:`.performance`: rate by footprint with the interpolants and the caches
  (paper 003 Figs. 3 and 5), predicted against measured (Fig. 4), the
  cache-aware roofline (``benchdb plot``).
* :mod:`.comm`: ping-pong and halo exchanges against their models
  (``benchdb comm show --plot``).

The figures use matplotlib's object API on the Agg canvas (no ``pyplot``):
no global state and no display.  The interactive charts of ``benchdb report``
are plotly figures in :mod:`benchdb.report.charts`.
"""

from .comm import comm_fits
from .performance import performance_curve, predicted_vs_measured, roofline
from .save import FORMATS, check_output, save

__all__ = [
    "FORMATS",
    "check_output",
    "comm_fits",
    "performance_curve",
    "predicted_vs_measured",
    "roofline",
    "save",
]
