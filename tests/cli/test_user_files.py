"""The one rule for every file benchdb writes (benchdb/outputs.py): it writes into a folder
it creates, or replaces a file it can tell is its own (a report page's generator tag, an
export's header, a figure's metadata), or asks for ``--force``, naming the file.  A file
of the user's under the same name is refused in one line, exit 2, and left as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchdb.db.engine import open_database
from tests.clihelpers import assert_user_error, benchdb
from tests.predict.synth import add_run, square_sizes, step_curve

MINE = "my own notes, not benchdb's\n"


@pytest.fixture(scope="module")
def db_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('files') / 'bench.sqlite'}"
    db = open_database(url)
    add_run(db, "shallow.cu", square_sizes(32, 2048, 8), step_curve())
    db.close()
    return url


def test_report_never_overwrites_an_index_html_the_user_wrote(db_url: str, tmp_path: Path) -> None:
    page = tmp_path / "index.html"
    page.write_text(MINE)
    refused = benchdb("report", "--out", str(tmp_path), "--db", db_url)
    assert_user_error(refused, f"{page} exists; choose another --out, or pass --force")
    assert page.read_text() == MINE
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.html"]  # no plotly.min.js

    forced = benchdb("report", "--out", str(tmp_path), "--force", "--db", db_url)
    assert forced.returncode == 0, forced.stderr
    assert "benchdb report" in page.read_text()
    again = benchdb("report", "--out", str(tmp_path), "--db", db_url)  # its own: replaced
    assert again.returncode == 0, again.stderr


def test_report_never_overwrites_a_plotly_js_the_user_wrote(db_url: str, tmp_path: Path) -> None:
    script = tmp_path / "plotly.min.js"
    script.write_text("// my own build\n")
    refused = benchdb("report", "--out", str(tmp_path), "--db", db_url)
    assert_user_error(refused, f"{script} exists")
    assert script.read_text() == "// my own build\n"
    assert not (tmp_path / "index.html").exists()


PLOT = ("plot", "curve", "-k", "shallow.cu", "--out")
WRITERS = [
    ("export", "--out"),
    ("export", "--out"),
    ("export", "--out"),
    PLOT,
    PLOT,
]
NAMES = ["e.json", "e.csv", "e.parquet", "c.png", "c.svg"]


@pytest.mark.parametrize(("command", "name"), list(zip(WRITERS, NAMES, strict=True)), ids=NAMES)
def test_a_writer_replaces_its_own_file_and_refuses_the_users(
    db_url: str, tmp_path: Path, command: tuple[str, ...], name: str
) -> None:
    out = tmp_path / name
    first = benchdb(*command, str(out), "--db", db_url)
    assert first.returncode == 0, first.stderr
    again = benchdb(*command, str(out), "--db", db_url)  # benchdb's own file: replaced
    assert again.returncode == 0, again.stderr

    out.write_text(MINE)
    refused = benchdb(*command, str(out), "--db", db_url)
    assert_user_error(refused, f"{out} exists; choose another --out, or pass --force")
    assert out.read_text() == MINE
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # no partial file left
    forced = benchdb(*command, str(out), "--force", "--db", db_url)
    assert forced.returncode == 0, forced.stderr
    assert out.read_bytes() != MINE.encode()
