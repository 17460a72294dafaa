"""A user's program through the whole product: collect, store, predict, list, compare, resume.

The program is ``toy.py`` (a numpy triad that times itself and prints the line
protocol), run with a few small sizes and short samples; no timing is asserted.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from benchdb.kernels.sources import load_program
from sqlalchemy import select

from benchdb.db.engine import open_database
from benchdb.db.models import Kernel, Measurement
from benchdb.db.repo import kernel_version
from tests.clihelpers import assert_user_error, benchdb, invoke

from .programs import toy_spec

SIZES = ["--sizes", "2000,20000,200000", "--sample-time", "0.002", "--passes", "2"]


def collect(url: str, spec: Path, *more: str) -> dict:
    result = invoke("collect", "--program", str(spec), *SIZES, *more, "--db", url, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def rows(url: str) -> list[tuple[str, str, str, bool, list, str]]:
    db = open_database(url)
    try:
        with db.session() as s:
            found = s.execute(
                select(
                    Kernel.name,
                    Kernel.origin,
                    Measurement.shape_key,
                    Measurement.valid,
                    Measurement.flags,
                    Measurement.context,
                ).join(Kernel, Measurement.kernel_id == Kernel.id)
            )
            return [tuple(r) for r in found]
    finally:
        db.close()


def test_a_program_is_swept_stored_listed_and_predicted(tmp_path: Path, sqlite_url: str) -> None:
    spec = toy_spec(tmp_path)
    report = collect(sqlite_url, spec)
    assert report["run"]["status"] == "complete"
    stored = rows(sqlite_url)
    assert len(stored) == 6  # two loops at three sizes
    assert {(r[0], r[1], r[5]) for r in stored} == {
        ("toy.triad", "program", "program"),
        ("toy.scale", "program", "program"),
    }
    assert all(r[3] for r in stored), stored
    bench, _ = load_program(spec)
    db = open_database(sqlite_url)
    with db.session() as s:
        versions = dict(s.execute(select(Kernel.name, Kernel.version)).all())
        evidence = s.scalars(select(Measurement.evidence)).all()
    db.close()
    assert versions["toy.triad"] == kernel_version(bench.kernels[0])
    # each sample is judged against the time the program's own timers report, which is
    # part of its process's wall time (start-up and set-up are not)
    for columns in evidence:
        timed, wall = columns["timed_s"], columns["wall_s"]
        assert timed and all(0 < t < w for t, w in zip(timed, wall, strict=True))

    listed = json.loads(invoke("kernels", "--db", sqlite_url, "--json").stdout)
    toy = next(k for k in listed if k["name"] == "toy.triad")
    assert (toy["origin"], toy["points_here"], toy["source"]) == ("program", 3, str(spec))

    proc = benchdb("predict", "-k", "toy.triad", "-s", "50000", "-s", "1000000", "--json",
                   "--method", "linear", "--db", sqlite_url)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout)
    assert answer["lookup"]["rate_unit"] == "flop/s"
    assert answer["lookup"]["context"] == "program"
    first, beyond = answer["predictions"]
    assert first["footprint_bytes"] == 3 * 50000 * 8 and not first["extrapolated"]
    assert beyond["extrapolated"] and first["time_s"] > 0

    code = (  # the layout stored with the kernel defines it: nothing of the program is run
        "import sys\nfrom benchdb.predict.predictions import predict_columns\n"
        "from benchdb.db.engine import open_database\n"
        f"predict_columns(open_database({sqlite_url!r}), 'toy.triad', [(50000,)], "
        "method='linear')\nprint('numba' in sys.modules, 'benchdb.kernels.spec' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.split() == ["False", "False"], done.stderr


def test_a_point_that_fails_is_stored_invalid_with_its_reason(
    tmp_path: Path, sqlite_url: str
) -> None:
    spec = toy_spec(tmp_path, "--fail-above", "100000")
    report = collect(sqlite_url, spec)
    assert report["run"]["status"] == "complete"
    bad = [r for r in rows(sqlite_url) if not r[3]]
    assert {(r[0], r[2]) for r in bad} == {("toy.triad", "200000"), ("toy.scale", "200000")}
    assert all(
        any("exit status 3: toy: n = 200000 is too large" in f for f in r[4]) for r in bad
    ), bad
    shown = benchdb("measurements", "show", "-k", "toy.triad", "--db", sqlite_url)
    assert "INVALID" in shown.stdout and "exit status 3" in shown.stdout
    proc = benchdb("predict", "-k", "toy.triad", "-s", "50000", "--method", "linear",
                   "--json", "--db", sqlite_url)  # fmt: skip
    lookup = json.loads(proc.stdout)["lookup"]
    assert lookup["invalid_excluded"] == 1
    assert lookup["measured_range_bytes"][1] == 3 * 20000 * 8


def test_a_result_that_changes_between_runs_invalidates_its_points(
    tmp_path: Path, sqlite_url: str
) -> None:
    spec = toy_spec(tmp_path, "--random-checksum")
    proc = benchdb("collect", "--program", str(spec), *SIZES, "--passes", "1", "--db", sqlite_url)
    stored = rows(sqlite_url)
    assert stored and not any(r[3] for r in stored)
    assert all(any("differs from the first run" in f for f in r[4]) for r in stored)
    # a collection that stored no valid point fails, and its last line says why
    assert proc.returncode == 1, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("no point of run 1 is valid (") and "differs" in last, last
    assert "Traceback" not in proc.stderr


@pytest.mark.slow  # two whole sweeps of a built program
def test_changed_code_is_a_new_version_never_mixed_with_the_old(
    tmp_path: Path, sqlite_url: str
) -> None:
    spec = toy_spec(tmp_path)
    first = collect(sqlite_url, spec, "--passes", "1")["run"]["run_id"]
    spec.write_text(spec.read_text().replace('description = "a = 0.5 c + b"', 'description = "v2"'))
    second = collect(sqlite_url, spec, "--passes", "1")["run"]["run_id"]
    listed = json.loads(invoke("kernels", "--db", sqlite_url, "--json").stdout)
    triads = [k for k in listed if k["name"] == "toy.triad"]
    assert len(triads) == 2 and triads[0]["version"] != triads[1]["version"]
    proc = benchdb("predict", "-k", "toy.triad", "-s", "50000", "--method", "linear",
                   "--json", "--db", sqlite_url)  # fmt: skip
    lookup = json.loads(proc.stdout)["lookup"]
    assert {r for p in lookup["points"] for r in p.get("run_ids", [second])} == {second}
    assert lookup["points"] and len(lookup["points"]) == 3  # the new version's three sizes only
    compared = benchdb("compare", str(first), str(second), "--json", "--db", sqlite_url)
    assert compared.returncode in (0, 1), compared.stderr
    kernels = json.loads(compared.stdout)["kernels"]
    assert all(k["version_change"] for k in kernels if k["kernel"] == "toy.triad")


@pytest.mark.slow  # a built program's sweep, stopped and continued
def test_resume_reloads_the_program_and_refuses_changed_code(
    tmp_path: Path, sqlite_url: str
) -> None:
    spec = toy_spec(tmp_path)
    report = collect(sqlite_url, spec, "--time-budget", "0")
    run = report["run"]["run_id"]
    assert report["run"]["status"] == "interrupted"
    spec.write_text(spec.read_text() + "\n# edited\n")
    refused = benchdb("collect", "--resume", str(run), "--db", sqlite_url)
    assert_user_error(refused, "changed since run")
    spec.write_text(spec.read_text().replace("\n# edited\n", ""))
    resumed = invoke("collect", "--resume", str(run), "--db", sqlite_url, "--json")
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.stdout)["run"]["status"] == "complete"
    assert len(rows(sqlite_url)) == 6


BAD = [
    ({"footprint": "arrays = 3\nhalo = [1, 1]"}, (), "halo [1, 1] must give one"),
    ({"program": 'binary = "absent"'}, (), "does not exist"),
    ({"program": 'build = "echo compiling; echo broken >&2; exit 3"'}, (), "status 3: broken"),
    ({}, ("--fail-above", "1"), "exit status 3: toy: n = 16 is too large"),
    ({"timeout": 2}, ("--hang",), "timed out after 2 s"),
    ({}, ("--garbage",), "breaks the protocol: line 3 ('BENCHDB time triad fast')"),
    ({"program": 'build = "echo x.c:1:1: error: unknown type name foo >&2; echo 1 foo x >&2; '
                 'echo compilation terminated. >&2; exit 1"'}, (),
     "status 1: x.c:1:1: error: unknown type name foo; fix the build"),
    ({}, ("--check-fail",), "self-check failed: values grew"),
]  # fmt: skip


@pytest.mark.parametrize(("spec_change", "args", "needle"), BAD)
def test_bad_programs_are_refused_before_anything_is_stored(
    tmp_path: Path, spec_change: dict, args: tuple, needle: str
) -> None:
    spec = toy_spec(tmp_path, *args, **spec_change)
    target = tmp_path / "new.sqlite"
    proc = benchdb("collect", "--program", str(spec), "--sizes", "2000", "--db",
                   f"sqlite:///{target}")  # fmt: skip
    assert_user_error(proc, needle)
    assert not target.exists()


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("format = 1\n[program\n", "is not valid TOML"),
        (
            "format = 1\n[program]\nname = 'toy'\n[shape]\nextents = ['n']\n"
            "[footprint]\narrays = 1\n",
            "[program] lacks 'command'",
        ),
    ],
)
def test_unusable_spec_files_are_refused(tmp_path: Path, text: str, needle: str) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text(text)
    target = tmp_path / "new.sqlite"
    proc = benchdb("collect", "--program", str(spec), "--db", f"sqlite:///{target}")
    assert_user_error(proc, needle)
    assert not target.exists()


def test_a_missing_command_leaves_an_existing_database_as_it_was(
    tmp_path: Path, sqlite_url: str
) -> None:
    collect(sqlite_url, toy_spec(tmp_path), "--passes", "1")
    before = rows(sqlite_url)
    spec = tmp_path / "spec.toml"
    spec.write_text(spec.read_text().replace(f'"{sys.executable}"', '"/no/such/prog"'))
    proc = benchdb("collect", "--program", str(spec), "--sizes", "2000", "--db", sqlite_url)
    assert_user_error(proc, "cannot start '/no/such/prog'")
    assert rows(sqlite_url) == before


def test_settings_the_program_cannot_run_are_refused(tmp_path: Path) -> None:
    spec = toy_spec(tmp_path)
    target = tmp_path / "new.sqlite"
    proc = benchdb("collect", "--program", str(spec), "--precision", "float32", "--db",
                   f"sqlite:///{target}")  # fmt: skip
    assert_user_error(proc, "runs float64, not float32")
    assert not target.exists()


def test_validate_plot_history_and_report_take_a_program_kernel(
    tmp_path: Path, sqlite_url: str
) -> None:
    collect(sqlite_url, toy_spec(tmp_path), "--passes", "1")
    for args in (
        ("validate", "--kernel", "toy.triad", "--method", "linear", "--json"),
        ("plot", "curve", "--kernel", "toy.triad", "--method", "linear",
         "--out", str(tmp_path / "curve.png")),
        ("history", "--kernel", "toy.scale", "--json"),
        ("report", "--out", str(tmp_path / "report")),
    ):  # fmt: skip
        result = invoke(*args, "--db", sqlite_url)
        assert result.exit_code == 0, (args, result.output)
    assert (tmp_path / "curve.png").stat().st_size > 0
    assert "toy.triad" in (tmp_path / "report" / "index.html").read_text()
