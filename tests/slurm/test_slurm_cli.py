"""``benchdb slurm``: the batch scripts it writes, and bad input refused before anything is
written or submitted (one line, exit 2).  None of these needs a cluster; the cases that ask
the cluster (an unknown partition, real jobs) are in test_cluster.py."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.clihelpers import assert_user_error, run_benchdb

PG = "postgresql+psycopg://user@dbhost/benchdb"
PG_PW = "postgresql+psycopg://user:pw-slurm-7f3a@dbhost/benchdb"  # its password, as given


def slurm(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``python -m benchdb slurm ARGS`` in ``cwd`` (where a job's output file would go)."""
    full = {k: v for k, v in os.environ.items() if k != "BENCHDB_URL"}
    full.update({"COLUMNS": "200", **(env or {})})
    return run_benchdb(["slurm", *args], env=full, cwd=cwd, timeout=120)


def test_collect_dry_run_prints_the_script_and_writes_nothing(tmp_path: Path) -> None:
    proc = slurm(
        "collect", "--nodes", "2", "-p", "debug", "-t", "10:00", "-A", "proj",
        "--sbatch-arg=--exclusive", "--db", PG, "--quick", "--kernels", "stream.triad",
        "--dry-run", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "#!/bin/bash"
    for directive in ["--nodes=2", "--ntasks-per-node=1", "--partition=debug", "--time=10:00",
                      "--account=proj", f"--output={tmp_path}/benchdb-collect-%j.out"]:  # fmt: skip
        assert f"#SBATCH {directive}" in lines
    assert lines.index("#SBATCH --exclusive") > lines.index("#SBATCH --nodes=2")  # last: wins
    (step,) = [ln for ln in lines if ln.startswith("srun ")]
    assert "--ntasks-per-node=1" in step and f"{sys.executable} -m benchdb collect" in step
    assert step.endswith(f"--db {PG} --quick --kernels stream.triad")
    assert list(tmp_path.iterdir()) == []


def test_comm_dry_run_runs_the_collector_module_under_srun_pmi2(tmp_path: Path) -> None:
    proc = slurm(
        "comm", "--nodes", "2", "--ntasks-per-node", "2", "--quick", "--benchmarks",
        "pingpong,pairs", "--db", PG, "--dry-run", "--json", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["job_id"] is None
    (step,) = [ln for ln in out["script"].splitlines() if ln.startswith("srun ")]
    # a rank that dies without MPI_Abort reaching srun ends the step: the others wait on it
    assert step.startswith(
        f"srun --mpi=pmi2 --kill-on-bad-exit=1 {sys.executable} -m benchdb.collectors.mpi --db {PG}"
    )
    assert "--benchmarks pingpong,pairs --max-bytes 65536 --samples 5" in step
    assert list(tmp_path.iterdir()) == []


def test_app_dry_run_runs_app_run_once_with_the_allocations_ranks(tmp_path: Path) -> None:
    """No srun: `benchdb app run` starts on the first node, and its launcher (hydra's
    mpiexec reads the allocation) places the ranks across the nodes."""
    proc = slurm(
        "app", "--nodes", "2", "--db", PG, "--grid", "64x64", "--decomp", "1x2", "--steps", "5",
        "--dry-run", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    step = proc.stdout.splitlines()[-1]
    assert step == (
        f"{sys.executable} -m benchdb app run --db {PG} --max-ranks 2 --grid 64x64 --decomp 1x2 "
        "--steps 5"
    )
    assert "#SBATCH --nodes=2" in proc.stdout and "srun" not in proc.stdout
    assert list(tmp_path.iterdir()) == []


MPI_SPEC = Path(__file__).parents[2] / "examples" / "shallow_mpi" / "benchdb.toml"


def test_calibrate_dry_run_times_the_programs_exchanges_placed_as_the_allocation(
    tmp_path: Path,
) -> None:
    """`benchdb app calibrate` starts on the first node with the ranks and the ranks a node
    of the allocation, which its runs are tagged with (ppnR) for the predictions."""
    proc = slurm(
        "calibrate", "--nodes", "2", "--ntasks-per-node", "2", "--db", PG,
        "--program", str(MPI_SPEC), "--dry-run", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == (
        f"{sys.executable} -m benchdb app calibrate --db {PG} --program {MPI_SPEC.resolve()} "
        "--ranks 4 --ranks-per-node 2"
    )
    assert "#SBATCH --nodes=2" in proc.stdout and "#SBATCH --ntasks-per-node=2" in proc.stdout
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("limit", ["30", "30:00", "1:00:00", "2-0", "2-12:30", "1-00:00:00"])
def test_every_slurm_time_format_is_taken(limit: str, tmp_path: Path) -> None:
    proc = slurm("comm", "--nodes", "2", "--db", PG, "-t", limit, "--dry-run", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert f"#SBATCH --time={limit}" in proc.stdout


@pytest.mark.parametrize(
    "command", [["collect"], ["comm"], ["app", "--grid", "64x64", "--decomp", "2x1"]]
)
def test_a_password_stays_out_of_the_script(command: list[str], tmp_path: Path) -> None:
    """The script (kept by slurmctld, its step line in every node's ps) names the database
    without the password; a note says how the job gets it."""
    for how in (["--db", PG_PW], []):
        proc = slurm(
            *command, "--nodes", "2", *how, "--dry-run", "--json",
            cwd=tmp_path, env={"BENCHDB_URL": PG_PW},
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert "pw-slurm-7f3a" not in proc.stdout + proc.stderr
        script = json.loads(proc.stdout)["script"]
        step = shlex.split(script.splitlines()[-1])
        assert step[step.index("--db") + 1] == PG
        assert "as PGPASSWORD in its environment" in proc.stderr


EXPORTS = [
    (["--sbatch-arg=--export=NONE"], {}, "--sbatch-arg=--export=NONE keeps the database password"),
    (["--sbatch-arg=--export=PATH,HOME=/h"], {}, "--export=PATH,HOME=/h keeps"),
    (["--sbatch-arg=--export NIL"], {}, "--sbatch-arg=--export NIL keeps"),
    (["--sbatch-arg=--export=ALL"], {"SBATCH_EXPORT": "NONE"}, "SBATCH_EXPORT=NONE keeps"),
]  # fmt: skip


@pytest.mark.parametrize(("args", "env", "needle"), EXPORTS, ids=[n for *_, n in EXPORTS])
def test_an_export_that_keeps_the_password_from_the_job_is_refused(
    args: list[str], env: dict[str, str], needle: str, tmp_path: Path
) -> None:
    proc = slurm("collect", "--nodes", "2", "--db", PG_PW, *args, "--dry-run", cwd=tmp_path,
                 env=env)  # fmt: skip
    assert_user_error(proc, needle)
    assert "pw-slurm-7f3a" not in proc.stderr


@pytest.mark.parametrize(
    ("db", "export"),
    [(PG_PW, "--export=ALL,EDITOR=vi"), (PG_PW, "--export=PATH,PGPASSWORD"), (PG, "--export=NONE")],
)  # fmt: skip
def test_an_export_that_lets_the_password_through_is_taken(
    db: str, export: str, tmp_path: Path
) -> None:
    proc = slurm("comm", "--nodes", "2", "--db", db, f"--sbatch-arg={export}", "--dry-run",
                 cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert f"#SBATCH {export}" in proc.stdout


NO_SLURM_PATH = str(Path(sys.executable).parent)  # this Python's folder only: no sbatch, no sinfo


BAD = [
    (["collect", "--nodes", "0", "--db", PG], "--nodes 0"),
    (["comm", "--nodes", "0", "--db", PG], "--nodes 0"),
    (["collect", "--nodes", "2", "--ntasks-per-node", "0", "--db", PG], "--ntasks-per-node 0"),
    (["collect", "--nodes", "2", "--db", "sqlite:///{tmp}/b.sqlite"], "SQLite file"),
    (["comm", "--nodes", "2", "--db", "sqlite:///{tmp}/b.sqlite"], "SQLite file"),
    (["collect", "--nodes", "2"], "SQLite file"),  # the default database is an SQLite file
    (["collect", "--nodes", "2", "--db", PG, "--bogus"], "No such option: --bogus"),
    (["collect", "--nodes", "2", "--db", PG, "--samples", "x"], "Invalid value for '--samples'"),
    (["collect", "--nodes", "2", "--db", PG, "--resume", "3"], "--resume continues a run"),
    (["comm", "--nodes", "2", "--db", PG, "--decomp", "3x1"], "--decomp 3x1 has 3 ranks"),
    (["comm", "--nodes", "1", "--db", "sqlite:///{tmp}/b.sqlite"], "at least 2 ranks"),
    (["comm", "--nodes", "2", "--db", PG, "--benchmarks", "nope"], "unknown benchmark"),
    (["collect", "--nodes", "1", "--db", "sqlite:///{tmp}/b.sqlite"], "no `sbatch` on PATH"),
    (["comm", "--nodes", "2", "--db", PG], "no `sbatch` on PATH"),
    # collect's own checks, before anything is submitted, dry run or not (issue 31)
    (["collect", "-N", "2", "--db", PG, "-k", "nosuch", "--dry-run"], "unknown kernel 'nosuch'"),
    (["collect", "-N", "2", "--db", PG, "--sizes", "0x5", "--dry-run"], "shape '0x5' has a zero"),
    (["collect", "-N", "2", "--db", PG, "--tag", "", "--dry-run"], "--tag is empty"),
    (["collect", "-N", "2", "--db", PG, "--time", "banana", "--dry-run"], "--time 'banana' is not"),
    (["comm", "-N", "2", "--db", PG, "--time", "1:2:3:4", "--dry-run"], "--time '1:2:3:4' is not"),
    (["comm", "-N", "2", "--db", PG, "--wait", "--dry-run"], "submits no job to wait for"),
    # app run's own checks, and the allocation against --decomp (issue 35)
    (["app", "-N", "2", "--db", PG, "--grid", "64x64", "--decomp", "1x1", "--dry-run"],
     "--decomp 1x1 runs 1 rank(s), the allocation has 2 (--nodes 2 x --ntasks-per-node 1)"),
    (["app", "-N", "2", "--db", PG, "--grid", "65x64", "--decomp", "2x1", "--dry-run"],
     "does not divide"),
    (["app", "-N", "2", "--db", PG, "--grid", "64x64", "--decomp", "2x1", "--max-ranks", "4"],
     "--max-ranks is set by the job; leave it out"),
    (["app", "-N", "2", "--db", PG, "--grid", "64x64", "--decomp", "2x1", "--steps", "0"],
     "--steps"),
    (["app", "-N", "2", "--db", PG, "--grid", "64x64", "--decomp", "2x1", "--program",
      "{tmp}/nowhere.toml", "--dry-run"], "nowhere.toml"),
    (["app", "-N", "2", "--db", "sqlite:///{tmp}/b.sqlite", "--grid", "64x64", "--decomp", "2x1"],
     "SQLite file"),
    (["app", "-N", "2", "--db", PG, "--grid", "64x64", "--decomp", "2x1"], "no `sbatch` on PATH"),
    (["calibrate", "-N", "1", "--db", PG, "--program", str(MPI_SPEC), "--dry-run"],
     "--nodes 1 places every rank on one node: run `benchdb app calibrate --program` there"),
    (["calibrate", "-N", "2", "--db", PG, "--program", "{tmp}/nowhere.toml", "--dry-run"],
     "nowhere.toml"),
    (["calibrate", "-N", "2", "--db", PG, "--program", str(MPI_SPEC)], "no `sbatch` on PATH"),
]  # fmt: skip


@pytest.mark.parametrize(("args", "needle"), BAD, ids=[" ".join(a[:3]) + f" {n}" for a, n in BAD])
def test_bad_input_is_one_line_exit_2_nothing_written(
    args: list[str], needle: str, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    env = {"PATH": NO_SLURM_PATH, "XDG_DATA_HOME": str(tmp_path / "data")}
    proc = slurm(*args, cwd=work, env=env)
    assert_user_error(proc, needle)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["work"]  # no database, no data dir
    assert list(work.iterdir()) == []  # no script, no job output


def test_calibrate_refuses_a_program_that_reports_no_exchanges(tmp_path: Path) -> None:
    spec = tmp_path / "spec"
    shutil.copytree(MPI_SPEC.parent, spec)
    text = (spec / "benchdb.toml").read_text()
    (spec / "benchdb.toml").write_text(
        text.replace('reports = ["total", "loops", "exchanges", "cpu"]', 'reports = ["total"]')
    )
    work = tmp_path / "work"
    work.mkdir()
    proc = slurm(
        "calibrate", "-N", "2", "--db", PG, "--program", str(spec / "benchdb.toml"), "--dry-run",
        cwd=work,
    )  # fmt: skip
    assert_user_error(proc, "reports no time in exchanges")
    assert list(work.iterdir()) == []


def test_a_dry_run_whose_controller_does_not_answer_prints_the_script_and_says_so(
    tmp_path: Path,
) -> None:
    """A login node with Slurm installed and its controller down: a dry run prints the
    script and says on stderr that it was not checked; a submission is refused, one line."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("sinfo", "sbatch"):
        fake = bin_dir / tool
        fake.write_text("#!/bin/sh\necho 'Unable to contact slurm controller' >&2\nexit 1\n")
        fake.chmod(0o755)
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    args = ("collect", "--nodes", "2", "--db", PG, "--quick", "--kernels", "stream.triad")
    work = tmp_path / "work"
    work.mkdir()
    dry = slurm(*args, "--dry-run", cwd=work, env=env)
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.startswith("#!/bin/bash")
    assert "not checked against the cluster" in dry.stderr and "controller" in dry.stderr
    submitted = slurm(*args, cwd=work, env=env)
    assert_user_error(submitted, "check that the Slurm controller is up")
    assert list(work.iterdir()) == []
