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
