"""``compare`` in a project's CI: ``--format markdown`` and the config file's thresholds.

Synthetic runs (rows.py ``add_run``) with known answers: ``stream.triad`` 20 %
slower, ``stream.copy`` unchanged.  Bad options and bad config files must exit 2
with one line naming the fix and leave the database as it was.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchdb.config import find_config, load_config, project_config
from benchdb.db.engine import Database, open_database
from tests.clihelpers import assert_user_error, benchdb

from .rows import add_run
from .test_regress_cli import cli, counts, points


@pytest.fixture
def two_runs(db: Database) -> None:
    add_run(db, points(), tags=["main"])
    add_run(db, points({"stream.triad": 1.2}), tags=["pr-42"])


def test_markdown_leads_with_the_verdict_and_lists_only_changed_kernels(
    db_url: str, db: Database, two_runs
) -> None:
    proc = cli("compare", "main", "pr-42", "--format", "markdown", "--db", db_url)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert lines[0] == "### benchdb: regression in 1 kernel"
    assert lines[2] == "Slower: `stream.triad`."
    table = [ln for ln in lines if ln.startswith("| `")]
    assert len(table) == 1 and "`stream.triad`" in table[0] and "**slower**" in table[0]
    assert "+20.0%" in table[0]
    assert "stream.copy" not in proc.stdout  # unchanged: not listed
    assert "`main`" in proc.stdout and "`pr-42`" in proc.stdout


def test_markdown_without_a_change_says_so(db_url: str, db: Database) -> None:
    add_run(db, points(), tags=["a"])
    add_run(db, points(), tags=["b"])
    proc = cli("compare", "a", "b", "--format", "markdown", "--db", db_url)
    assert proc.returncode == 0
    assert proc.stdout.startswith("### benchdb: no regression\n")
    assert "| `" not in proc.stdout


def test_format_json_is_the_json_flag(db_url: str, db: Database, two_runs) -> None:
    by_flag = json.loads(cli("compare", "main", "pr-42", "--json", "--db", db_url).stdout)
    by_format = json.loads(
        cli("compare", "main", "pr-42", "--format", "json", "--db", db_url).stdout
    )
    assert by_flag == by_format
    kernel = next(k for k in by_flag["kernels"] if k["kernel"] == "stream.triad")
    assert {"ci_low", "ci_high", "threshold", "median_ratio", "verdict"} <= set(kernel)


def test_per_kernel_threshold_from_benchdb_toml(
    db_url: str, db: Database, two_runs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "benchdb.toml").write_text('[compare.thresholds]\n"stream.*" = 30\n')
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")  # found in a parent directory
    proc = cli("compare", "main", "pr-42", "--db", db_url, "--json")
    assert proc.returncode == 0, proc.stdout
    out = json.loads(proc.stdout)
    assert out["kernel_thresholds"] == {"stream.*": pytest.approx(0.30)}
    assert [k["threshold"] for k in out["kernels"]] == pytest.approx([0.30, 0.30])
    triad = next(k for k in out["kernels"] if k["kernel"] == "stream.triad")
    assert triad["verdict"] in ("unchanged", "noisy")


def test_pyproject_tool_benchdb_and_exact_names_before_patterns(
    db_url: str, db: Database, two_runs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.benchdb.compare]\nthreshold = 30\n\n'
        '[tool.benchdb.compare.thresholds]\n"stream.triad" = 10\n"stream.*" = 50\n'
    )
    monkeypatch.chdir(tmp_path)
    proc = cli("compare", "main", "pr-42", "--db", db_url, "--json")
    assert proc.returncode == 1
    out = json.loads(proc.stdout)
    assert out["threshold"] == pytest.approx(0.30)
    limits = {k["kernel"]: k["threshold"] for k in out["kernels"]}
    assert limits == {"stream.triad": pytest.approx(0.10), "stream.copy": pytest.approx(0.50)}
    assert out["regressed_kernels"] == ["stream.triad"]
    # --threshold replaces the file's default; per-kernel entries still apply
    proc = cli("compare", "main", "pr-42", "--threshold", "7", "--db", db_url, "--json")
    assert json.loads(proc.stdout)["threshold"] == pytest.approx(0.07)


def test_a_spec_file_may_carry_the_compare_table(tmp_path: Path) -> None:
    spec = Path(__file__).parents[2] / "examples" / "shallow_fortran" / "benchdb.toml"
    both = tmp_path / "benchdb.toml"
    both.write_text(spec.read_text() + '\n[compare.thresholds]\n"shallowf90.*" = 12\n')
    assert load_config(both).compare.thresholds == {"shallowf90.*": pytest.approx(0.12)}
    from benchdb.kernels.spec import load_spec

    assert load_spec(both).name == "shallowf90"


def test_lookup_order(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert find_config(tmp_path) is None  # a pyproject.toml without [tool.benchdb]
    assert project_config(start=tmp_path).path is None
    (tmp_path / "pyproject.toml").write_text("[tool.benchdb.compare]\nthreshold = 8\n")
    assert find_config(tmp_path) == tmp_path / "pyproject.toml"
    (tmp_path / "benchdb.toml").write_text("[compare]\nthreshold = 9\n")
    assert find_config(tmp_path) == tmp_path / "benchdb.toml"  # benchdb.toml first
    assert project_config(start=tmp_path).compare.threshold == pytest.approx(0.09)


BAD_CONFIGS = [
    ("benchdb.toml", "[compare]\nthreshold = -3\n", "compare.threshold = -3 is not a percentage"),
    ("benchdb.toml", "[compare]\nthreshhold = 3\n", "unknown key(s) threshhold"),
    ("benchdb.toml", "[compare.thresholds]\nshallow.cu = 10\n", 'quote kernel names'),
    ("benchdb.toml", "[compare]\nalpha = 2\n", "compare.alpha = 2 is not a probability"),
    ("benchdb.toml", "[comapre]\nthreshold = 3\n", "unknown key(s) comapre"),
    ("benchdb.toml", "[compare\n", "is not valid TOML"),
    ("benchdb.toml", '[compare]\nthresholds = "x"\n', "must be a table of kernel = percent"),
    ("pyproject.toml", "[tool.benchdb]\ncompare = 5\n", "tool.benchdb.compare must be a table"),
    ("pyproject.toml", '[project]\nname = "x"\n', "has no [tool.benchdb] table"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "text", "needle"), BAD_CONFIGS, ids=lambda v: str(v)[:30])
def test_bad_config_is_one_line_exit_2_and_writes_nothing(
    sqlite_url: str, tmp_path: Path, name: str, text: str, needle: str
) -> None:
    db = open_database(sqlite_url)
    add_run(db, points(), tags=["main"])
    add_run(db, points({"stream.triad": 1.2}), tags=["pr-42"])
    before = counts(db)
    config = tmp_path / name
    config.write_text(text)
    proc = benchdb("compare", "main", "pr-42", "--config", str(config), "--db", sqlite_url)
    assert_user_error(proc, needle)
    assert str(config) in proc.stderr
    assert counts(db) == before


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--format", "html"], "choose one of: table, json, markdown"),
        (["--format", "markdown", "--json"], "contradict each other"),
        (["--config", "/no/such/benchdb.toml"], "does not exist"),
    ],
)
def test_bad_options_exit_2_before_the_database_is_opened(
    tmp_path: Path, args: list[str], needle: str
) -> None:
    target = tmp_path / "never.sqlite"
    assert_user_error(cli("compare", "a", "b", *args, "--db", f"sqlite:///{target}"), needle)
    assert not target.exists()
