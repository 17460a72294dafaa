"""``benchdb predict``, ``validate`` and ``plot`` through the real console entry point."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import func, select

from benchdb.db.engine import open_database
from benchdb.db.models import Model
from tests.clihelpers import assert_user_error, benchdb

from .synth import add_run, cli, square_sizes, step_curve

SIZES = square_sizes(8, 1500, 16)


@pytest.fixture(scope="module")
def url(tmp_path_factory) -> str:
    """One database with a fitting run, a tagged validation run and a STREAM sweep."""
    path = tmp_path_factory.mktemp("cli") / "bench.sqlite"
    u = f"sqlite:///{path}"
    db = open_database(u)
    add_run(db, "stencil2d5", SIZES, step_curve())
    add_run(
        db,
        "stream.triad",
        [(n,) for n in np.geomspace(100, 3e6, 12).astype(int)],
        step_curve(8e9, 2e9),
    )
    add_run(db, "stencil2d5", [(30, 50), (200, 90), (700, 400)], step_curve(), tags=["validation"])
    db.close()
    return u


def models(url: str) -> int:
    db = open_database(url)
    with db.session() as s:
        n = s.scalar(select(func.count()).select_from(Model))
    db.close()
    return n


def test_predict_json_many_shapes(url: str, tmp_path: Path, capsys) -> None:
    f = tmp_path / "shapes.txt"
    f.write_text("# shapes\n600x400\n50,50\n")
    proc = cli(
        capsys,
        "predict",
        "--db",
        url,
        "-k",
        "stencil2d5",
        "-s",
        "100x100",
        "--shapes-file",
        str(f),
        "--range",
        "20x20:3000x2000:4",
        "--iterations",
        "10",
        "--method",
        "logcurve",
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    shapes = [r["shape"] for r in out["predictions"]]
    assert shapes == ["100x100", "600x400", "50x50", "20x20", "106x93", "565x431", "3000x2000"]
    assert out["lookup"]["method"] == "logcurve" and out["lookup"]["params"]["X1"] > 0
    assert all(r["time_s"] > 0 and r["lo_footprint_bytes"] > 0 for r in out["predictions"])
    assert out["predictions"][-1]["extrapolated"] is True
    by = {r["shape"]: r for r in out["predictions"]}  # rows run along the last (C) axis
    assert by["100x100"]["log_aspect"] == 0 and by["100x100"]["aspect_extrapolated"] is False
    assert by["600x400"]["log_aspect"] == pytest.approx(math.log(400 / math.sqrt(600 * 400)))


def test_predict_table_and_no_numba_on_the_prediction_path(url: str) -> None:
    code = (
        "import sys\n"
        "from benchdb.cli.app import main\n"
        f"sys.argv = ['benchdb', 'predict', '--db', {url!r}, '-k', 'stencil2d5', '-s', '300x300']\n"
        "try:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
        "print('NUMBA_LOADED' if 'numba' in sys.modules else 'NUMBA_ABSENT')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={"COLUMNS": "200", "PATH": ""},
    )
    assert proc.returncode == 0, proc.stderr
    assert "300x300" in proc.stdout and "Gflop/s" in proc.stdout
    assert "NUMBA_ABSENT" in proc.stdout


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["-k", "bogus", "-s", "10x10"], "known kernels: shallow.cu"),
        (["-k", "stencil2d5", "-s", "0x10"], "zero or negative"),
        (["-k", "stencil2d5", "-s", "-5x10"], "zero or negative"),
        (["-k", "stencil2d5", "-s", "10x10", "--threads", "8"], "measured thread counts: 1"),
        (["-k", "shallow.cu", "-s", "10x10"], "benchdb collect --kernels shallow"),
        (["-k", "stencil2d5", "-s", "10x10", "--method", "nope"], "use one of"),
        (["-k", "stencil2d5", "--range", "10x10:20x20"], "first:last:count"),
        (["-k", "stencil2d5", "--range", "100x100:1000x1000:100000000"], "count from 1"),
        (["-k", "stencil2d5", "--shapes-file", "/bin/sh"], "is not text"),
        (["-k", "stencil2d5"], "give at least one shape"),
    ],
)
def test_predict_bad_input_exit_2_and_nothing_written(
    url: str, args: list[str], needle: str, capsys
) -> None:
    before = models(url)
    assert_user_error(cli(capsys, "predict", "--db", url, *args), needle)
    assert models(url) == before


def test_no_data_for_this_machine(tmp_path: Path) -> None:
    assert_user_error(
        benchdb(
            "predict",
            "--db",
            f"sqlite:///{tmp_path / 'empty.sqlite'}",
            "-k",
            "shallow.cu",
            "-s",
            "9x9",
        ),
        "benchdb collect",
    )


def test_method_that_cannot_fit_says_how_many_points(tmp_path: Path, capsys) -> None:
    u = f"sqlite:///{tmp_path / 'few.sqlite'}"
    db = open_database(u)
    add_run(db, "jacobi2d", [(10, 10), (20, 20), (40, 40)], step_curve())
    db.close()
    assert_user_error(
        cli(capsys, "predict", "--db", u, "-k", "jacobi2d", "-s", "30x30", "-m", "logcurve"),
        "needs at least 4 measured footprints",
    )


def test_validate_json_has_methods_and_baselines(url: str, capsys) -> None:
    proc = cli(capsys, "validate", "--db", url, "--kernel", "stencil2d5", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    methods = {r["method"] for r in report["results"]}
    assert methods == {"linear", "pchip", "logcurve", "eq5", "roofline", "escape"}
    assert report["split_rule"] == "tagged validation"
    assert all(r["check"]["n"] == 3 for r in report["results"] if r["kind"] == "method")


@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_plots_are_written(url: str, tmp_path: Path, suffix: str, capsys) -> None:
    outs = {k: tmp_path / f"{k}{suffix}" for k in ("curve", "validation", "roofline")}
    for kind, out in outs.items():
        extra = ["-k", "stencil2d5"] if kind == "curve" else []
        proc = cli(capsys, "plot", kind, "--db", url, *extra, "--out", str(out))
        assert proc.returncode == 0, proc.stderr
    for out in outs.values():
        head = out.read_bytes()[:200]
        assert (
            head.startswith(b"\x89PNG") if suffix == ".png" else b"<svg" in out.read_bytes()[:2000]
        )


def test_plot_rejects_unknown_format(url: str, tmp_path: Path, capsys) -> None:
    assert_user_error(
        cli(capsys, "plot", "roofline", "--db", url, "--out", str(tmp_path / "x.gif")),
        "must end in .png",
    )


def test_validate_takes_kernels_as_measurements_show_does(url: str, capsys) -> None:
    """Repeated or comma-separated, like every other --kernel option."""
    joined = cli(capsys, "validate", "--db", url, "-k", "stencil2d5,stream.triad", "--json")
    repeated = cli(capsys, "validate", "--db", url, "-k", "stencil2d5", "-k", "stream.triad",
                   "--json")  # fmt: skip
    assert joined.returncode == repeated.returncode == 0, joined.stderr
    kernels = {r["kernel"] for r in json.loads(joined.stdout)["results"]}
    assert "stencil2d5" in kernels
    assert kernels == {r["kernel"] for r in json.loads(repeated.stdout)["results"]}
