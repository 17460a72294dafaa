"""Usage errors the command-line framework finds (a bad type, a missing option, an unknown
command or option): one line naming the fix, exit status 2, for every command."""

from __future__ import annotations

import pytest

from tests.clihelpers import assert_user_error, benchdb

BAD = [
    (["predict", "-k", "shallow.cu", "-s", "10x10", "--iterations", "abc"],
     "Invalid value for '--iterations'", "benchdb predict --help"),
    (["predict", "-s", "10x10"], "Missing option '--kernel'", "benchdb predict --help"),
    (["bogus"], "No such command 'bogus'", "benchdb --help"),
    (["collect", "--nope"], "No such option: --nope", "benchdb collect --help"),
    (["collect", "--samples", "many"], "Invalid value for '--samples'", "benchdb collect --help"),
    (["compare"], "Missing argument", "benchdb compare --help"),  # 'BASELINE' in typer 0.15
    (["history"], "Missing option '--kernel'", "benchdb history --help"),
    (["app", "predict", "--steps", "abc"], "Invalid value for '--steps'", "benchdb app predict"),
    (["comm", "predict", "--ranks", "x"], "Invalid value for '--ranks'", "benchdb comm predict"),
    (["measurements", "show", "--threads", "two"], "Invalid value for '--threads'",
     "benchdb measurements show --help"),
    (["runs", "list", "--limit", "0"], "Invalid value for '--limit'", "benchdb runs list --help"),
    (["measurements", "show", "--threads", "-4"], "Invalid value for '--threads'",
     "benchdb measurements show --help"),
    (["export"], "Missing option '--out'", "benchdb export --help"),
    (["kernels", "--bogus"], "No such option: --bogus", "benchdb kernels --help"),
    (["db", "bogus"], "No such command 'bogus'", "benchdb db --help"),
    (["machine", "show", "extra"], "unexpected extra argument", "benchdb machine show --help"),
]  # fmt: skip


@pytest.mark.parametrize(("args", "needle", "help_hint"), BAD, ids=lambda v: str(v)[:40])
def test_usage_errors_are_one_line_naming_the_help(args, needle, help_hint, tmp_path) -> None:
    target = tmp_path / "never.sqlite"
    proc = benchdb(*args, env={"BENCHDB_URL": f"sqlite:///{target}"})
    assert_user_error(proc, needle)
    assert help_hint in proc.stderr and "Usage:" not in proc.stderr
    assert not target.exists()


@pytest.mark.parametrize("group", [[], ["runs"], ["comm"]])
def test_a_bare_group_shows_its_help_and_exits_2(group: list[str]) -> None:
    """The same on every click version the floors allow (8.1 exited 0, 8.2 exits 2)."""
    proc = benchdb(*group)
    usage = " ".join(["benchdb", *group, "[OPTIONS] COMMAND"])
    assert proc.returncode == 2 and usage in proc.stdout, proc.stdout


def test_help_and_success_exit_zero() -> None:
    assert benchdb("predict", "--help").returncode == 0
    assert benchdb("machine", "show").returncode == 0


@pytest.mark.parametrize("run", ["999", "99999999999999999999"])
def test_a_run_that_is_not_there_is_named(sqlite_url: str, run: str) -> None:
    assert benchdb("machine", "register", "--db", sqlite_url).returncode == 0
    proc = benchdb("measurements", "show", "--run", run, "--db", sqlite_url)
    assert_user_error(proc, "no run 999" if len(run) == 3 else "is not a run id")
