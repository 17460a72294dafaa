"""``benchdb report``: which runs it compares, what the page says, and that it renders.

The database mixes run kinds as a user's does: kernel collections of two
settings, a populated-node calibration (``app calibrate``) newer than all of
them, and a communication run with fitted models.  Samples are synthetic with
known answers (stream.triad 2x slower in the newest collection), so that
what the page must say is known.  The page is then opened in headless
Chromium: the DOM after load must hold every chart drawn by plotly, and a
screenshot must show coloured traces inside the charts' boxes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from benchdb.collectors.mpi.results import write_run

from benchdb.comm.store import fit_models
from benchdb.db.baseline import set_baseline
from benchdb.db.engine import Database, open_database
from benchdb.errors import UserError
from benchdb.regress.pick import pick_runs
from benchdb.report import write_report
from tests.comm.synthetic import lassen_pingpong
from tests.needs import missing

from .rows import add_run
from .test_regress_cli import cli

SETTINGS = {"mode": "quick", "sample_time": 0.005, "samples": 10, "passes": 1}
OTHER = {**SETTINGS, "sample_time": 0.02}
SHAPES = {
    "stream.triad": [(n,) for n in (256, 1024, 4096, 16384, 65536, 262144, 1048576)],
    "stencil2d5": [(n, n) for n in (16, 32, 64, 128, 256, 512)],
}
SLOWED = "stream.triad"


def _points(seed: int, slow: float = 1.0) -> dict:
    """Samples of every point: 1 ns per grid point, rising past 64 KiB, 1 % noise."""
    rng = np.random.default_rng(seed)
    out = {}
    for kernel, shapes in SHAPES.items():
        for shape in shapes:
            n = sum(shape)
            base = 1e-9 * n * (1.0 if n < 8192 else 2.5) * (slow if kernel == SLOWED else 1.0)
            out[(kernel, shape)] = list(base * (1 + 0.01 * rng.standard_normal(10)))
    return out


def _comm_run(db: Database) -> None:
    write_run(db, lassen_pingpong(), config={"ranks": 2}, tags=["comm"])
    fit_models(db)


class Runs:
    """The ids of the mixed runs, oldest first."""

    def __init__(self, db: Database) -> None:
        self.first = add_run(db, _points(1), tags=["first"], config=SETTINGS)
        self.base = add_run(db, _points(2), tags=["base"], config=SETTINGS)
        self.other = add_run(db, _points(3), tags=["slow-samples"], config=OTHER)
        self.slowed = add_run(db, _points(4, slow=2.0), tags=["change"], config=SETTINGS)
        self.populated = add_run(
            db, _points(5), tags=["ppn2"], kind="app-calibrate", config=SETTINGS, context="ppn2"
        )


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Database, str, Runs]:
    url = f"sqlite:///{tmp_path_factory.mktemp('report') / 'report.sqlite'}"
    db = open_database(url)
    runs = Runs(db)
    _comm_run(db)
    return db, url, runs


def test_the_newest_collection_is_compared_with_the_newest_of_its_settings(mixed) -> None:
    db, _, runs = mixed
    pick = pick_runs(db)
    assert pick.collection.run_id == runs.slowed
    assert pick.baseline is not None and pick.baseline.run_id == runs.base
    assert pick.reason == "the newest earlier complete collection with the same settings"
    why = {o.run.run_id: o.why for o in pick.left_out}
    assert set(why) == {runs.populated, runs.other}
    assert "populated-node calibration" in why[runs.populated]
    assert "not a kernel collection" in why[runs.populated]
    assert why[runs.other] == "collected with other settings: sample_time 0.02 instead of 0.005"


def test_a_comparable_pinned_baseline_is_taken_and_another_is_named(db: Database) -> None:
    first = add_run(db, _points(1), config=SETTINGS)
    other = add_run(db, _points(2), config=OTHER)
    base = add_run(db, _points(3), config=SETTINGS)
    newest = add_run(db, _points(4), config=SETTINGS)
    set_baseline(db, str(first))
    pick = pick_runs(db)
    assert (pick.collection.run_id, pick.baseline.run_id) == (newest, first)
    assert pick.reason.startswith("the node class's pinned baseline")
    assert pick.left_out == ()
    set_baseline(db, str(other))
    pick = pick_runs(db)
    assert pick.baseline.run_id == base
    assert f"the pinned baseline, run {other}, is collected with other settings" in pick.reason
    set_baseline(db, str(newest))
    assert pick_runs(db).reason.endswith(
        f"the pinned baseline, run {newest}, is this collection itself"
    )


@pytest.mark.parametrize("mode", ["refine", "advise"])
def test_a_run_that_adds_points_is_never_the_collection_compared(db: Database, mode) -> None:
    base = add_run(db, _points(1), config=SETTINGS)
    newest = add_run(db, _points(2), config=SETTINGS)
    extra = add_run(db, _points(3), config={**SETTINGS, "mode": mode})
    pick = pick_runs(db)
    assert (pick.collection.run_id, pick.baseline.run_id) == (newest, base)
    why = {o.run.run_id: o.why for o in pick.left_out}
    assert why[extra].endswith(
        f"(benchdb {mode}{' --measure' * (mode == 'advise')}), not a collection"
    )


def test_a_collection_with_nothing_comparable_is_shown_and_says_so(db: Database, tmp_path) -> None:
    add_run(db, _points(1), config=OTHER)
    newest = add_run(db, _points(2), config=SETTINGS)
    add_run(db, _points(3), kind="app-calibrate", config=SETTINGS, context="ppn2")
    pick = pick_runs(db)
    assert pick.collection.run_id == newest and pick.baseline is None
    assert pick.reason.startswith("no earlier complete kernel collection has the same settings")
    text = write_report(db, tmp_path / "r").index.read_text()
    assert "nothing to compare" in text and "id='summary'" not in text
    assert f"Kernels of run {newest}" in text


def test_no_kernel_collection_is_a_user_error(db: Database) -> None:
    add_run(db, _points(1), kind="app-calibrate", config=SETTINGS, context="ppn2")
    with pytest.raises(UserError, match=r"no complete kernel collection.*run `benchdb collect`"):
        pick_runs(db)


def test_the_page_names_the_runs_the_verdict_and_every_part(mixed, tmp_path: Path) -> None:
    db, _, runs = mixed
    out = tmp_path / "report"
    text = write_report(db, out).index.read_text()
    assert f"<dt>Collection</dt><dd>run {runs.slowed} [change]" in text
    assert f"<dt>Baseline</dt><dd>run {runs.base} [base]" in text
    assert "the newest earlier complete collection with the same settings" in text
    assert "Runs left out (2)" in text and "populated-node calibration" in text
    assert f"Regression: 1 kernel(s) slower ({SLOWED})" in text
    for kernel in SHAPES:
        assert f'href="#k-{kernel}"' in text and f"id='k-{kernel}'" in text
        for chart in ("curve", "ratio", "history"):
            assert f'id="k-{kernel}-{chart}"' in text
    assert "pchip lookup curve of environment" in text and "leave-one-out error" in text
    assert 'id="chart-comm-pingpong"' in text and "intra-socket" in text
    assert (out / "plotly.min.js").stat().st_size > 1_000_000
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", text)  # nothing from outside


def test_bad_input_exits_2_and_writes_nothing(mixed, tmp_path: Path) -> None:
    _, url, _ = mixed
    out = tmp_path / "r"
    proc = cli("report", "--out", str(out), "--db", url, "--detector", "nope")
    assert proc.returncode == 2 and "nope" in proc.stderr
    assert not out.exists()
    afile = tmp_path / "a-file"
    afile.write_text("")
    proc = cli("report", "--out", str(afile), "--db", url)
    assert proc.returncode == 2 and "is a file; give a folder" in proc.stderr


def test_report_command_json(mixed, tmp_path: Path) -> None:
    _, url, runs = mixed
    proc = cli("report", "--out", str(tmp_path / "r"), "--db", url, "--json")
    assert proc.returncode == 0, proc.stdout
    out = json.loads(proc.stdout)
    assert Path(out["index"]).is_file()
    assert (out["collection"], out["baseline"]) == (runs.slowed, runs.base)
    assert out["regression"] is True and out["regressed_kernels"] == [SLOWED]
    assert {o["run_id"] for o in out["left_out"]} == {runs.populated, runs.other}


@pytest.fixture
def chromium() -> str:
    """The browser: ``BENCHDB_CHROMIUM``, else chromium on PATH; a skip, or a failure
    with ``BENCHDB_REQUIRE_CHROMIUM=1`` (CI), when there is none."""
    found = os.environ.get("BENCHDB_CHROMIUM") or shutil.which("chromium")
    found = found or shutil.which("chromium-browser")
    if not found or not shutil.which(found):
        missing(f"no chromium ({found or 'not on PATH'}): apt-get install -y chromium",
                "BENCHDB_REQUIRE_CHROMIUM")  # fmt: skip
    return found


PROBE = """<script>
addEventListener('load', () => setTimeout(() => {
  const charts = [...document.querySelectorAll('.plotly-graph-div')];
  const drawn = charts.filter(c => c.querySelectorAll('.trace .point, .trace .js-line').length);
  const boxes = charts.map(c => c.querySelector('.nsewdrag').getBoundingClientRect())
    .map(r => [r.left, r.top, r.width, r.height].map(Math.round).join(','));
  const curve = document.querySelector('.plotly-graph-div[id$="-curve"]');
  Plotly.Fx.hover(curve, [{curveNumber: 0, pointNumber: 0}]);
  const hover = curve.querySelector('.hoverlayer .hovertext');
  document.body.setAttribute('data-charts', charts.length);
  document.body.setAttribute('data-drawn', drawn.length);
  document.body.setAttribute('data-boxes', boxes.join(';'));
  document.body.setAttribute('data-hover', hover ? hover.textContent : '');
}, 500));
</script></body>"""

WINDOW = (1400, 2600)


def _browse(browser: str, page: Path, *args: str) -> subprocess.CompletedProcess[str]:
    profile = tempfile.mkdtemp()
    flags = [
        "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--no-first-run", f"--user-data-dir={profile}", f"--window-size={WINDOW[0]},{WINDOW[1]}",
        "--virtual-time-budget=20000", "--enable-logging=stderr", "--v=0",
    ]  # fmt: skip
    try:
        return subprocess.run(
            [browser, *flags, *args, page.as_uri()],
            capture_output=True,
            text=True,
            timeout=180,
            env={**os.environ, "HOME": profile},
        )
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def _coloured(image: np.ndarray, box: tuple[int, ...]) -> int:
    """Pixels inside ``box`` (left, top, width, height) with a saturated colour: traces,
    not the white background, grey grid or black text."""
    left, top, width, height = box
    area = image[top : top + height, left : left + width, :3].astype(float)
    return int((area.max(axis=2) - area.min(axis=2) > 0.25).sum())


@pytest.fixture(params=[False, True], ids=["folder", "inline"])
def rendered(request, chromium: str, mixed, tmp_path: Path) -> Iterator[tuple[str, Path, bool]]:
    db, _, _ = mixed
    inline = request.param
    index = write_report(db, tmp_path / "report", inline=inline).index
    if inline:  # the one file must stand alone
        index = index.rename(tmp_path / "alone.html")
        shutil.rmtree(tmp_path / "report")
    yield chromium, index, inline


def test_the_page_draws_every_chart_in_headless_chromium(rendered) -> None:
    browser, index, inline = rendered
    assert ("<script src='plotly.min.js'>" in index.read_text()) is not inline
    check = index.with_name("check.html")  # the page plus a probe of what plotly drew
    check.write_text(index.read_text().replace("</body>", PROBE))
    dom = _browse(browser, check, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    charts = re.search(r'data-charts="(\d+)"', dom.stdout)
    drawn = re.search(r'data-drawn="(\d+)"', dom.stdout)
    assert charts and drawn, dom.stdout[-2000:]
    # 2 kernels x (curve, change, history), the overview, the ping-pong fit
    assert int(charts.group(1)) == int(drawn.group(1)) == 8
    errors = [ln for ln in dom.stderr.splitlines() if "CONSOLE" in ln or "Failed to load" in ln]
    assert errors == [], errors
    hover = re.search(r'data-hover="([^"]*)"', dom.stdout).group(1)  # a value on hover
    assert "footprint" in hover and "rate" in hover and "median time" in hover, hover
    shot = index.with_name("shot.png")
    proc = _browse(browser, check, f"--screenshot={shot}")
    assert proc.returncode == 0 and shot.is_file(), proc.stderr[-2000:]
    import matplotlib.image

    image = matplotlib.image.imread(shot)
    assert image.shape[:2] == (WINDOW[1], WINDOW[0])
    boxes = re.search(r'data-boxes="([^"]*)"', dom.stdout).group(1).split(";")
    visible = [
        b for b in (tuple(int(v) for v in box.split(",")) for box in boxes)
        if b[1] >= 0 and b[1] + b[3] <= WINDOW[1] and b[2] > 100 and b[3] > 100
    ]  # fmt: skip
    assert len(visible) >= 3, boxes  # the overview and the first kernel's charts
    for box in visible:
        assert _coloured(image, box) > 40, box  # a blank chart has none
    assert _coloured(image, (260, 0, 600, 50)) == 0  # the title: text, not colour
