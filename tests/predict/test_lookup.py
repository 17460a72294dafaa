"""Predictions from measurements stored through the ORM (SQLite and PostgreSQL)."""

from __future__ import annotations

import numpy as np
import pytest
from sqlalchemy import func, select

from benchdb.db.models import Model
from benchdb.errors import UserError
from benchdb.predict import predict
from benchdb.predict.basis import rate_basis

from .synth import add_run, square_sizes, step_curve

SIZES = square_sizes(8, 1500, 20)


def test_measured_shape_predicts_its_own_time_and_spread(sdb) -> None:
    curve = step_curve()
    add_run(sdb, "stencil2d5", SIZES, curve, spread=0.04)
    shape = SIZES[7]
    basis = rate_basis("stencil2d5")
    points, fp = basis.points_and_footprint(np.array([shape]))
    for method in ("linear", "pchip"):
        df = predict(sdb, "stencil2d5", [shape], iterations=50, method=method)
        t = basis.work_per_point * points[0] * 50 / curve(fp)[0]
        assert df.time_s[0] == pytest.approx(t, rel=1e-9)
        assert df.uncertainty_rel[0] == pytest.approx(0.04, abs=3e-3)
        assert df.lo_footprint_bytes[0] <= fp[0] <= df.hi_footprint_bytes[0]
        assert not df.extrapolated[0]


def test_between_points_is_close_and_outside_is_flagged(sdb) -> None:
    curve = step_curve()
    add_run(sdb, "stencil2d5", SIZES, curve)
    shapes = np.array([[300, 200], [700, 120], [4, 4], [3000, 3000]])
    df = predict(sdb, "stencil2d5", shapes, iterations=1, method="pchip")
    true = curve(df.footprint_bytes.to_numpy())
    assert np.all(np.abs(df.rate[:2] / true[:2] - 1) < 0.03)
    assert list(df.extrapolated) == [False, False, True, True]
    assert df.rate_unit[0] == "flop/s"


def test_interpolation_error_is_large_across_a_cache_edge_and_covers_the_miss(sdb) -> None:
    """The chord across a sharp cache step misses the true curve; the leave-one-out
    estimate must say so there (and not on the plateaus), whatever the method."""
    curve = step_curve(corner=2e5, width=0.2)
    add_run(sdb, "stencil2d5", SIZES, curve)
    sides = np.array([m for m, _ in SIZES], dtype=float)
    mids = np.round(np.sqrt(sides[:-1] * sides[1:])).astype(int)  # one query per interval
    for method in ("linear", "pchip"):
        df = predict(sdb, "stencil2d5", np.column_stack([mids, mids]), method=method)
        miss = np.abs(curve(df.footprint_bytes.to_numpy()) / df.rate.to_numpy() - 1)
        est = df.interpolation_rel.to_numpy()
        edge = np.argmax(miss)
        assert miss[edge] > 0.1 and est[edge] >= miss[edge]
        plateau = np.abs(np.log(df.footprint_bytes.to_numpy() / 2e5)) > 2.5
        assert plateau.sum() >= 4 and np.all(est[plateau] < 0.01)
        assert np.isnan(est).sum() == 0  # every interval has an interior bracketing point


def test_data_only_kernel_is_looked_up_in_bytes_per_second(sdb) -> None:
    add_run(sdb, "stream.copy", [(n,) for n in (1000, 10000, 100000)], step_curve(5e10, 1e10))
    df = predict(sdb, "stream.copy", [(5000,)], method="linear")
    assert df.rate_unit[0] == "B/s"
    assert df.time_s[0] == pytest.approx(16 * 5000 / df.rate[0])


def test_fit_is_stored_reused_and_redone_when_data_change(db) -> None:
    add_run(db, "jacobi2d", SIZES, step_curve())
    first = predict(db, "jacobi2d", [(100, 100)], method="logcurve")
    again = predict(db, "jacobi2d", [(100, 100)], method="logcurve")
    assert first.model_id[0] == again.model_id[0]
    with db.session() as s:
        row = s.get(Model, int(first.model_id[0]))
        assert row.kind == "predictor.logcurve" and row.subject == "jacobi2d/t1/float64/isolated"
        assert len(row.data_hash) == 64 and row.params["X1"] > 0
    add_run(db, "jacobi2d", [(333, 333)], step_curve())
    changed = predict(db, "jacobi2d", [(100, 100)], method="logcurve")
    assert changed.model_id[0] != first.model_id[0]


def test_newest_environment_is_the_default(sdb) -> None:
    add_run(sdb, "stencil2d5", SIZES, step_curve())
    from benchdb.db.models import Environment, Run

    with sdb.session() as s:
        old = s.scalars(select(Run)).one()
        env = Environment(
            fingerprint="f" * 64,
            python="3",
            numpy="x",
            numba="x",
            llvmlite="x",
            threading_layer="x",
            benchdb_version="x",
            info={},
        )
        s.add(env)
        s.flush()
        new_env = env.id
    run2 = add_run(sdb, "stencil2d5", SIZES, step_curve(8e9, 2e9))
    with sdb.session() as s:
        s.get(Run, run2).environment_id = new_env
    df = predict(sdb, "stencil2d5", [SIZES[0]], method="linear")
    assert df.environment_id[0] == new_env and df.rate[0] == pytest.approx(8e9, rel=1e-3)
    old_df = predict(
        sdb, "stencil2d5", [SIZES[0]], method="linear", environment_id=old.environment_id
    )
    assert old_df.rate[0] == pytest.approx(4e9, rel=1e-3)


def test_flags_of_bracketing_points_are_reported(sdb) -> None:
    add_run(
        sdb,
        "stencil2d5",
        SIZES,
        step_curve(),
        flags_at={SIZES[5]: ["noisy"]},
        scale_at={SIZES[2]: 1.5},
    )
    df = predict(sdb, "stencil2d5", [SIZES[5], SIZES[2], SIZES[15]], method="linear")
    assert "noisy" in df.point_flags[0] and "spike" in df.point_flags[1] and df.point_flags[2] == ""


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (dict(kernel="nope.kernel"), "known kernels: shallow.cu"),
        (dict(kernel="stencil2d5", threads=2), "measured thread counts: 1"),
        (dict(kernel="jacobi2d"), "benchdb collect --kernels jacobi2d"),
        (dict(kernel="stencil2d5", shapes=[(0, 5)]), "zero or negative"),
        (dict(kernel="stencil2d5", shapes=[(2, 5)]), "must be >= 3"),
        (dict(kernel="stencil2d5", method="cubic"), "use one of"),
    ],
)
def test_bad_input_is_a_user_error_and_writes_nothing(sdb, call, needle) -> None:
    add_run(sdb, "stencil2d5", SIZES, step_curve())
    args = {"shapes": [(100, 100)], **call}
    with pytest.raises(UserError, match=needle.replace("(", r"\(")):
        predict(sdb, args.pop("kernel"), args.pop("shapes"), **args)
    with sdb.session() as s:
        assert s.scalar(select(func.count()).select_from(Model)) == 0


def test_method_needing_more_points_says_how_many(sdb) -> None:
    add_run(sdb, "stencil2d5", SIZES[:3], step_curve())
    with pytest.raises(UserError, match="at least 4 measured footprints; stencil2d5 has 3"):
        predict(sdb, "stencil2d5", [(100, 100)], method="logcurve")


def test_a_prediction_reads_the_definition_and_sizes_the_shapes_once(sdb, monkeypatch) -> None:
    from benchdb.predict import basis, predictions

    add_run(sdb, "stencil2d5", SIZES, step_curve())
    calls = {"definition": 0, "sized": 0}
    definition, sized = basis.definition, basis.RateBasis.points_and_footprint

    def count_definition(*args):
        calls["definition"] += 1
        return definition(*args)

    def count_sized(self, shapes):
        calls["sized"] += 1
        return sized(self, shapes)

    monkeypatch.setattr(basis, "definition", count_definition)
    monkeypatch.setattr(basis.RateBasis, "points_and_footprint", count_sized)
    lookup, answer = predictions.predict_columns(sdb, "stencil2d5", [(300, 200), (700, 120)])
    assert calls == {"definition": 1, "sized": 1}
    assert len(answer) == 2 and answer.method == lookup.method.name == "pchip"
    rows, frame = answer.rows(), answer.frame()
    assert [r["shape"] for r in rows] == ["300x200", "700x120"]
    assert list(frame.columns[:3]) == ["shape_0", "shape_1", "kernel"]
    assert frame.time_s.tolist() == answer.time_s.tolist()
