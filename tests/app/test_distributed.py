"""The distributed shallow-water run: same answer as the serial model, stored, failing cleanly."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from benchdb.collectors.app.collect import AppRunRequest, execute, validate
from benchdb.collectors.app.populated import calibrate_populated
from benchdb.kernels import get_benchmark
from benchdb.kernels.builtin.shallow.model import ShallowState
from sqlalchemy import func, select

from benchdb.app.decomposition import Decomposition
from benchdb.app.shallow_app import STEP_KERNELS
from benchdb.db.engine import open_database
from benchdb.db.models import AppRun, Measurement, Run
from benchdb.errors import UserError
from benchdb.evidence import Evidence, from_columns, most_disturbed
from tests.clihelpers import assert_user_error, benchdb

pytestmark = pytest.mark.mpi


@pytest.mark.parametrize(("grid", "px", "py"), [((18, 15), 2, 1), ((15, 18), 1, 2)])
def test_bitwise_equal_to_serial_model(tmp_path: Path, grid, px: int, py: int) -> None:
    steps = 6
    req = AppRunRequest(grid=grid, decomp=Decomposition(px, py), steps=steps, diag_every=2)
    result = execute(req, str(tmp_path / "f"))
    serial = get_benchmark("shallow").prepare(grid, "float64", 1)  # does the forward step
    serial.advance(steps)
    for rank in range(2):
        block = np.load(tmp_path / f"f.{rank}.npz")
        i0, j0 = block["origin"]
        for name in ShallowState._fields:
            local = block[name]
            ref = getattr(serial.state, name)[i0 : i0 + local.shape[0], j0 : j0 + local.shape[1]]
            # Bitwise, except where fastmath lets LLVM vectorise the z loop's
            # division: a local inner extent other than the global one moves
            # points between the vector body and the scalar remainder, which
            # may round differently (seen: 1 ulp).  Round-off, nothing more.
            np.testing.assert_allclose(
                local,
                ref,
                rtol=8 * np.finfo(ref.dtype).eps,
                atol=0,
                err_msg=f"rank {rank}, field {name}",
            )
    assert result["mass"] == pytest.approx(serial.mass(), rel=1e-12)
    assert result["reductions"] == steps // 2


def test_app_run_stores_one_row(sqlite_url: str) -> None:
    proc = benchdb(
        "app",
        "run",
        "--grid",
        "16x12",
        "--decomp",
        "1x2",
        "--steps",
        "1",
        "--db",
        sqlite_url,
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["decomposition"] == "1x2" and out["ranks"] == 2
    timed = sum(out["loops_s"].values()) + sum(out["exchanges_s"].values()) + out["reduction_s"]
    assert out["untimed_s"] == pytest.approx(out["rank_s"][out["slowest_rank"]] - timed)
    db = open_database(sqlite_url)
    with db.session() as s:
        row = s.scalars(select(AppRun)).one()
        assert row.run.kind == "app" and row.run.status == "complete"
        assert row.total_seconds == max(row.rank_seconds) > 0
        assert len(row.loop_seconds) == 2 and "shallow.unew" in row.loop_seconds[0]
        assert set(row.exchange_seconds[1]) == {
            f"{f}.{a}" for f in ("cu", "cv", "z", "h", "unew", "vnew", "pnew") for a in "xy"
        }
        assert row.energy["source"] in ("rapl", "none")
    db.close()


def test_bad_input_exits_2_and_writes_nothing(sqlite_url: str) -> None:
    proc = benchdb("app", "run", "--grid", "15x12", "--decomp", "2x1", "--db", sqlite_url)
    assert_user_error(proc, "does not divide")
    db = open_database(sqlite_url)
    with db.session() as s:
        assert s.scalar(select(func.count()).select_from(Run)) == 0
    db.close()


@pytest.mark.parametrize(
    ("req", "needle"),
    [
        (AppRunRequest((16, 12), Decomposition(2, 2), 1, max_ranks=2), "more than the 2 allowed"),
        (AppRunRequest((16, 12), Decomposition(2, 1), 0), "--steps"),
        (AppRunRequest((16, 12), Decomposition(2, 1), 1, precision="float16"), "precision"),
        (AppRunRequest((1 << 17, 1 << 17), Decomposition(2, 1), 1), "memory"),
    ],
)
def test_validate_rejects_before_starting(req: AppRunRequest, needle: str) -> None:
    with pytest.raises(UserError, match=needle):
        validate(req)


def _worker_pids(parent: int) -> list[int]:
    """Our launched worker processes: descendants of ``parent`` running the app worker."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [parent]
    while todo:
        pid = todo.pop()
        for child in children.get(pid, []):
            todo.append(child)
            try:
                cmd = (Path("/proc") / str(child) / "cmdline").read_bytes()
            except OSError:
                continue
            if b"benchdb.collectors.app.worker" in cmd and b"mpiexec" not in cmd:
                found.append(child)
    return found


def test_a_killed_rank_ends_the_job_with_a_message_and_nothing_written(sqlite_url: str) -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "benchdb",
            "app",
            "run",
            "--grid",
            "64x64",
            "--decomp",
            "2x1",
            "--steps",
            "1000000",
            "--db",
            sqlite_url,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    workers: list[int] = []
    while len(workers) < 2 and time.monotonic() < deadline:
        time.sleep(0.5)
        workers = _worker_pids(proc.pid)
    assert len(workers) == 2
    time.sleep(2.0)  # past start-up, inside the time steps
    os.kill(workers[-1], signal.SIGKILL)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, err
    assert "MPI run failed" in err and "nothing was written" in err
    assert "Traceback" not in err
    db = open_database(sqlite_url)
    with db.session() as s:
        assert s.scalar(select(func.count()).select_from(Run)) == 0
        assert s.scalar(select(func.count()).select_from(AppRun)) == 0
    db.close()


def test_populated_calibration_pools_passes(sqlite_url: str) -> None:
    """Every stored point carries the samples of all passes, in the populated context."""
    db = open_database(sqlite_url)
    run_id, stored = calibrate_populated(db, 2, sizes_spec="8x8,12x6")
    with db.session() as s:
        rows = s.scalars(select(Measurement).where(Measurement.run_id == run_id)).all()
        # the run's loops and copy, timed inside the distributed step: no boundary phases
        assert {r.kernel.name for r in rows} == set(STEP_KERNELS)
        assert len(rows) == stored == 2 * len(STEP_KERNELS)
        assert {r.context for r in rows} == {"fullstep:ppn2"}
        assert {r.passes for r in rows} == {3}
        assert all(r.valid for r in rows)
        # every rank read its evidence; a disturbed sample was retaken by all of them
        assert all(len(r.samples) == 15 or "disturbed" in r.flags for r in rows)
        assert all(len(r.evidence["wall_s"]) == len(r.samples) for r in rows)
        aside = [from_columns(r.set_aside, len(r.set_aside.get("t_s", []))) for r in rows]
        assert all(e is not None and e.disturbed for each in aside for e in each)
    db.close()


def test_a_lock_step_sample_is_as_disturbed_as_its_most_disturbed_rank() -> None:
    quiet = Evidence(0.02, 0.02, 0.0, 0, 0.0, 0.0)
    hit = Evidence(0.03, 0.02, 0.01, 3, 0.0, 0.01)
    assert most_disturbed([quiet, hit, quiet]) is hit and hit.disturbed
    assert not most_disturbed([quiet, quiet]).disturbed
