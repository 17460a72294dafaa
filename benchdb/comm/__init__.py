"""Communication models: postal/Hockney piecewise by regime, max-rate, K-model,
halo exchange and global reductions (Kerbyson & Jones, paper 001 eq. 7-10;
Choi et al., paper 002 eq. 1-5), fitted from ``benchdb comm collect`` data or
read from a machine file.  Never imports numba or the collectors.
"""

from .allreduce_model import AllreduceModel, tree_time
from .halo_model import HaloPrediction, halo_message_bytes, predict_halo2d
from .kmodel import KModel, block_mapping, halo_messages, k_model, neighbours
from .maxrate import MaxRateRegime, fit_regime, maxrate_time, short_time
from .params import CommParams, load_machine_file, parse_machine
from .pop import POP_TEST, POP_X1, PopInput, pop_events
from .postal import PiecewisePostal, PostalFit, PostalRegime, fit_piecewise

__all__ = [
    "POP_TEST",
    "POP_X1",
    "AllreduceModel",
    "CommParams",
    "HaloPrediction",
    "KModel",
    "MaxRateRegime",
    "PiecewisePostal",
    "PopInput",
    "PostalFit",
    "PostalRegime",
    "block_mapping",
    "fit_piecewise",
    "fit_regime",
    "halo_message_bytes",
    "halo_messages",
    "k_model",
    "load_machine_file",
    "maxrate_time",
    "neighbours",
    "parse_machine",
    "pop_events",
    "predict_halo2d",
    "short_time",
    "tree_time",
]
