"""Kernel versions: migration 0004 versions existing rows exactly as new ones are versioned."""

from __future__ import annotations

from alembic import command
from benchdb.kernels.registry import BUILTIN
from sqlalchemy import func, select, text

from benchdb.db.engine import make_engine, open_database
from benchdb.db.migrate import alembic_config
from benchdb.db.models import Kernel
from benchdb.db.repo import kernel_version, register_kernel


def test_rows_written_before_versions_get_the_version_registration_computes(db_url: str) -> None:
    engine = make_engine(db_url)
    command.upgrade(alembic_config(engine), "0003")
    kernels = BUILTIN.kernels()
    with engine.begin() as conn:
        for k in kernels:
            conn.execute(
                text(
                    "INSERT INTO kernel (name, family, ndim, flops_per_point, loads_per_point, "
                    "stores_per_point, arrays, footprint_version, description, info) VALUES "
                    "(:name, :family, :ndim, :flops, :loads, :stores, :arrays, 1, '', :info)"
                ),
                {
                    "name": k.name, "family": k.family, "ndim": k.ndim,
                    "flops": k.flops_per_point, "loads": k.loads_per_point,
                    "stores": k.stores_per_point, "arrays": k.arrays,
                    "info": f'{{"write_allocate": {str(k.write_allocate).lower()}}}',
                },
            )  # fmt: skip
    engine.dispose()
    db = open_database(db_url)  # upgrades to head
    with db.session() as s:
        stored = dict(s.execute(select(Kernel.name, Kernel.version)).all())
        assert stored == {k.name: kernel_version(k) for k in kernels}
        for k in kernels:
            register_kernel(s, k)
    with db.session() as s:
        assert s.scalar(select(func.count()).select_from(Kernel)) == len(kernels)
        assert set(s.scalars(select(Kernel.origin))) == {"builtin"}
    db.close()


def test_changed_counts_or_code_make_another_version() -> None:
    from dataclasses import replace

    cu = next(k for k in BUILTIN.kernels() if k.name == "shallow.cu")
    assert kernel_version(replace(cu, flops_per_point=4)) != kernel_version(cu)
    assert kernel_version(replace(cu, source_hash="ab")) != kernel_version(cu)
    assert kernel_version(replace(cu, description="other words")) == kernel_version(cu)


def test_full_array_loops_are_rated_per_point_they_update_after_migration_0005(
    db_url: str,
) -> None:
    """Rows written when uold, vold, pold and copy were rated per inner M x N point get the
    (M+1)(N+1) points they update, their rates scaled alike, and the kernels' new version.
    (0005 changes data only, so rows written at head, brought down to the schema of 0005
    and stamped 0004 are a 0004 database.)"""
    from dataclasses import replace

    from benchdb.db.models import Measurement, Run
    from benchdb.db.repo import register_environment, register_machine
    from benchdb.environment import detect_environment
    from benchdb.machine import detect_machine

    uold = next(k for k in BUILTIN.kernels() if k.name == "shallow.uold")
    before = replace(uold, footprint_version=1)  # as benchdb rated it until 0005
    db = open_database(db_url)
    with db.session() as s:
        run = Run(
            uuid="kernel-versions-test",
            machine_id=register_machine(s, detect_machine()).id,
            environment_id=register_environment(s, detect_environment()).id,
        )
        s.add(run)
        s.flush()
        s.add(
            Measurement(
                run_id=run.id, kernel_id=register_kernel(s, before).id, shape=[10, 20],
                shape_key="10x20", points=200, footprint_bytes=24024, repetitions=1,
                samples=[1e-6], t_min=1e-6, t_median=1e-6, t_iqr=0.0, t_cv=0.0,
                flop_rate=5 * 200 / 1e-6, byte_rate=32 * 200 / 1e-6, valid=True,
            )
        )  # fmt: skip
    command.downgrade(alembic_config(db.engine), "0005")
    with db.engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = '0004'"))
    db.close()
    db = open_database(db_url)  # upgrades: 0005 converts the rows
    with db.session() as s:
        m = s.scalars(select(Measurement)).one()
        assert (m.points, m.kernel.footprint_version) == (231, 2)
        assert m.flop_rate == 5 * 231 / 1e-6 and m.byte_rate == 32 * 231 / 1e-6
        assert m.kernel.version == kernel_version(uold)
        assert register_kernel(s, uold).id == m.kernel_id  # the code's version: the same row
    db.close()
