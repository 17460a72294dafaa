"""``benchdb comm`` commands: bad input is a one-line error (exit 2) and writes nothing.

One case runs the real console entry point in a subprocess (exit status, one
line, no traceback); the others call the same typer app in-process, because
each ``benchdb`` start-up costs seconds on this machine.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import text

from benchdb.db.engine import open_database
from benchdb.errors import UserError
from tests.clihelpers import assert_user_error, benchdb, invoke

TABLES = ("machine", "environment", "run", "comm_measurement", "model")


def counts(url: str) -> dict[str, int]:
    db = open_database(url)
    with db.session() as s:
        out = {t: s.execute(text(f"SELECT COUNT(*) FROM {t}")).scalar_one() for t in TABLES}
    db.close()
    return out


def test_ranks_zero_exits_2_with_one_line(sqlite_url: str) -> None:
    before = counts(sqlite_url)
    assert_user_error(benchdb("comm", "collect", "--ranks", "0", "--db", sqlite_url), "--ranks 0")
    assert counts(sqlite_url) == before


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["comm", "collect", "--ranks", "2", "--decomp", "4x2"], "--decomp 4x2 has 8 ranks"),
        (["comm", "collect", "--benchmarks", "pingpong,bogus"], "unknown benchmark"),
        (["comm", "collect", "--max-bytes", "lots"], "--max-bytes 'lots'"),
        (["comm", "predict", "--decomp", "4x2", "--local", "8x8", "--ranks", "6"], "has 8 ranks"),
        (["comm", "predict", "--decomp", "2x1", "--local", "0x8"], "0x8"),
        (["comm", "predict", "--pattern", "ring"], "--pattern 'ring'"),
        (["comm", "predict", "--decomp", "2x1", "--local", "64x64"], "has no"),  # no data
    ],
)
def test_bad_input_writes_nothing(sqlite_url: str, args: list[str], needle: str) -> None:
    before = counts(sqlite_url)
    result = invoke(*args, "--db", sqlite_url)
    assert isinstance(result.exception, UserError), result.output
    assert needle in str(result.exception)
    assert counts(sqlite_url) == before


def test_malformed_machine_file(tmp_path: Path) -> None:
    bad = tmp_path / "m.toml"
    bad.write_text("[placements.inter-node]\nregimes = 3\n")
    result = invoke("comm", "predict", "--decomp", "2x1", "--local", "64x64",
                    "--machine-file", str(bad))  # fmt: skip
    assert isinstance(result.exception, UserError)
    assert "regimes must be a non-empty list" in str(result.exception)


def test_predict_with_a_bundled_machine_file() -> None:
    result = invoke(
        "comm", "predict", "--pattern", "halo2d", "--decomp", "8x6", "--local", "1024x1024",
        "--ranks", "48", "--ranks-per-node", "6", "--machine-file", "summit", "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["k_model"]["k"] == 3.0
    assert [p["phase"] for p in out["phases"]] == ["x", "y"]
    assert out["seconds"] == pytest.approx(sum(p["seconds"] for p in out["phases"]))
    allreduce = invoke("comm", "predict", "--pattern", "allreduce", "--ranks", "1024",
                       "--machine-file", "bluegene_l", "--json")  # fmt: skip
    row = json.loads(allreduce.output)[0]
    assert row["method"] == "2*log2(P)*p2p"
    assert row["seconds"] == pytest.approx(20 * 4.15e-6 + 20 * 8 * 6.3e-9)


def test_show_prints_the_fits_and_plots_them(sqlite_url: str, tmp_path: Path) -> None:
    from benchdb.collectors.mpi.results import write_run

    from benchdb.comm.store import fit_models

    from .synthetic import lassen_pingpong

    db = open_database(sqlite_url)
    write_run(db, lassen_pingpong(), config={"ranks": 2}, tags=[])
    fit_models(db)
    out = tmp_path / "comm.svg"
    result = invoke("comm", "show", "--plot", str(out), "--json", "--db", sqlite_url)
    assert result.exit_code == 0, result.output
    regimes = json.loads(result.output)["regimes"]
    assert {r["placement"] for r in regimes} == {"intra-socket"}
    assert all(r["median_rel_error"] < 0.05 for r in regimes)
    assert out.read_text().startswith("<?xml")
    for args, needle in (
        (["--plot", str(tmp_path / "comm.gif")], "must end in .png or .svg"),
        (["--plot", str(out), "--machine-file", "summit"], "--plot needs measured data"),
    ):
        result = invoke("comm", "show", *args, "--db", sqlite_url)
        assert isinstance(result.exception, UserError) and needle in str(result.exception)
    assert not (tmp_path / "comm.gif").exists()
