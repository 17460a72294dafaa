"""The analytic baselines on synthetic machines with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from benchdb.db.scope import Scope
from benchdb.predict.baselines import BASELINES, eq5, escape
from benchdb.predict.basis import rate_basis
from benchdb.predict.curve import build_curve
from benchdb.predict.machine_data import KernelCurve, MachineData
from benchdb.predict.source import MachineCaches

SYNTHETIC = Scope(1, "f" * 64, "synthetic", 1, (), host_ids=(1,), hostnames=("synthetic",))
CACHES = MachineCaches(SYNTHETIC, (("L1d", 32 * 1024), ("L2", 1 << 20), ("L3", 32 << 20)))
FOOTPRINTS = [8e3, 16e3, 200e3, 600e3, 4e6, 20e6, 1e8, 4e8]


def kcurve(kernel: str, rate_of_fp) -> KernelCurve:
    basis = rate_basis(kernel)
    rows = [
        {
            "measurement_id": i,
            "run_id": 1,
            "footprint_bytes": fp,
            "points": 1000,
            "t_median": basis.work_per_point * 1000 / rate_of_fp(fp),
            "samples": [basis.work_per_point * 1000 / rate_of_fp(fp)] * 5,
            "flags": [],
            "shape_key": str(i),
        }
        for i, fp in enumerate(FOOTPRINTS)
    ]
    return KernelCurve(basis, build_curve(rows, basis.work_per_point), "isolated")


def data(curves: dict[str, KernelCurve]) -> MachineData:
    return MachineData(CACHES, 1, "float64", 1, curves)


LEVEL_BW = {0: 100e9, 1: 50e9, 2: 20e9, 3: 8e9}


def level_bw(fp: float) -> float:
    return LEVEL_BW[int(CACHES.level_of(fp))]


def test_eq5_recovers_alpha_and_beta_per_level() -> None:
    alpha, beta = 0.3e9, 2e9  # memory level
    curves = {}
    for k in ("shallow.cu", "shallow.z", "shallow.h", "stencil2d5"):
        ai = eq5.intensity(rate_basis(k))
        curves[k] = kcurve(k, lambda fp, ai=ai: (beta * ai + alpha) * (2 if fp < 1e6 else 1))
    params = BASELINES.get("eq5").fit(data(curves))
    mem = params["levels"][-1]
    assert mem["alpha"] == pytest.approx(alpha, rel=1e-6) and mem["beta"] == pytest.approx(
        beta, rel=1e-6
    )
    assert params["levels"][0]["beta"] == pytest.approx(2 * beta, rel=1e-6)
    b = rate_basis("shallow.unew")
    got = BASELINES.get("eq5").evaluate(params, b, np.array([1e8]))
    assert got[0] == pytest.approx(beta * 10 / 7 + alpha, rel=1e-6)
    assert np.isnan(
        BASELINES.get("eq5").evaluate(params, rate_basis("stream.copy"), np.array([1e8]))[0]
    )


def test_roofline_uses_stream_ceilings_per_level_and_measured_l1_peak() -> None:
    triad = kcurve("stream.triad", lambda fp: level_bw(fp) * 2 / 24)  # flop/s = BW * AI
    hot = kcurve("shallow.z", lambda fp: 9e9 if fp < 32768 else 1e9)
    params = BASELINES.get("roofline").fit(data({"stream.triad": triad, "shallow.z": hot}))
    assert [c["bandwidth"] for c in params["ceilings"]] == pytest.approx(list(LEVEL_BW.values()))
    assert params["peak_flops"] == pytest.approx(9e9)
    b = rate_basis("shallow.cu")  # 3 flops / 24 bytes
    fp = np.array([1e4, 5e5, 1e7, 1e9])
    expected = np.minimum(9e9, 3 / 24 * np.array([100e9, 50e9, 20e9, 8e9]))
    np.testing.assert_allclose(
        BASELINES.get("roofline").evaluate(params, b, fp), expected, rtol=1e-9
    )
    copy = rate_basis("stream.copy")
    np.testing.assert_allclose(
        BASELINES.get("roofline").evaluate(params, copy, fp), list(LEVEL_BW.values()), rtol=1e-9
    )


def test_escape_blends_level_bandwidths_by_residency() -> None:
    caps = [c for _, c in CACHES.caches]
    share = escape.shares(caps, np.array([1e3, 2 * caps[2], 1e12]))
    np.testing.assert_allclose(share.sum(axis=1), 1.0)
    assert share[0, 0] == 1.0 and share[1, -1] == pytest.approx(0.5) and share[2, -1] > 0.999
    triad = kcurve("stream.triad", lambda fp: level_bw(fp) * 2 / 24)
    params = BASELINES.get("escape").fit(data({"stream.triad": triad}))
    copy = rate_basis("stream.copy")
    x = 2 * caps[2]
    expected = (
        caps[0] * 100e9 + (caps[1] - caps[0]) * 50e9 + (caps[2] - caps[1]) * 20e9
    ) / x + 0.5 * 8e9
    assert BASELINES.get("escape").evaluate(params, copy, np.array([x]))[0] == pytest.approx(
        expected, rel=1e-9
    )
