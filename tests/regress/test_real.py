"""Regression tracking on real kernel timings (benchdb.kernels, the collectors' timing).

The injected slowdown is a kernel variant that does more work: ``stream.triad``
run on 2x (compare) or 1.5x (history) the points, stored under the nominal
shape.  Not 1.1x: on the shared 2-core VM, even interleaved, unchanged points
differed by up to 23 % between two runs, single runs by 3x (load average 4-8),
and ``compare`` rightly calls a 10 % change there ``noisy``; a test that needed
it found would be a coin toss.  The runs' samples are taken round-robin (see rows.py), so all runs
see the shared machine's load alike; the comparison itself knows nothing of
that and must find exactly the slowed kernel.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from benchdb.db.engine import Database, open_database
from benchdb.regress import compare_runs, kernel_history
from benchdb.report import write_report

from .rows import RealRuns

POINTS = {
    "stream.sum": [(12000,), (32000,), (64000,)],
    "stream.fill": [(12000,), (32000,), (64000,)],
    "stencil2d5": [(24, 24), (48, 48), (96, 96)],
}
SLOWED = "stream.sum"
WORK = 2.0


@pytest.fixture(scope="module")
def injected(tmp_path_factory: pytest.TempPathFactory) -> tuple[Database, int, int]:
    url = f"sqlite:///{tmp_path_factory.mktemp('real') / 'real.sqlite'}"
    db = open_database(url)
    runs = RealRuns(db)
    base, cont = runs.start("base"), runs.start("slowed")
    for bench, shapes in POINTS.items():
        for shape in shapes:
            runs.measure(bench, shape, {base: 1.0, cont: WORK if bench == SLOWED else 1.0})
    runs.finish(base)
    runs.finish(cont)
    return db, base, cont


def test_compare_flags_exactly_the_kernel_doing_more_work(injected) -> None:
    db, base, cont = injected
    result = compare_runs(db, str(base), str(cont))
    assert sorted(set(result.regressions["kernel"])) == [SLOWED], result.results
    slowed = result.results[result.results["kernel"] == SLOWED]
    assert slowed["ratio"].median() > 1.3  # time need not scale exactly with work


@pytest.fixture(scope="module")
def history_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Database, str, list[int]]:
    """Twelve real runs; the last six run stream.sum on 1.5x the points."""
    url = f"sqlite:///{tmp_path_factory.mktemp('hist') / 'hist.sqlite'}"
    db = open_database(url)
    runs = RealRuns(db, samples=11)
    ids = [runs.start(f"r{i}") for i in range(12)]
    for bench in ("stream.sum", "stream.fill"):
        for shape in POINTS[bench][1:]:
            slowed = bench == SLOWED
            runs.measure(
                bench, shape, {r: 1.5 if slowed and i >= 6 else 1.0 for i, r in enumerate(ids)}
            )
    for run in ids:
        runs.finish(run)
    return db, url, ids


@pytest.mark.skipif(
    os.environ.get("BENCHDB_REAL_HISTORY") != "1",
    reason="set BENCHDB_REAL_HISTORY=1: on the loaded shared VM single unchanged runs of "
    "stream.sum deviate up to 4x, so this real-series check fails about half the time",
)
@pytest.mark.parametrize("detector", ["potts", "zscore"])
def test_history_finds_the_injected_step_in_a_real_series(history_db, detector: str) -> None:
    db, _, ids = history_db
    _, series = kernel_history(db, SLOWED, detector=detector)
    assert len(series) == 2
    for s in series:
        found = {st["run_id"]: st for st in s.steps}
        values = s.values["t_median"].tolist()
        assert ids[6] in found, (s.steps, values)  # the injected step, where it was injected
        assert found[ids[6]]["direction"] == "slower"
        assert found[ids[6]]["change"] > 0.2  # time need not scale exactly with work
        assert not [r for r in found if r < ids[6]], (s.steps, values)  # none in the flat part


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


CHECK = """<script>
addEventListener('load', () => {
  const imgs = [...document.images];
  const broken = imgs.filter(i => !i.complete || i.naturalWidth === 0).length;
  document.body.setAttribute('data-images', imgs.length);
  document.body.setAttribute('data-broken', broken);
});
</script></body>"""


@pytest.mark.parametrize("inline", [False, True])
def test_report_renders_in_headless_chromium(history_db, tmp_path: Path, inline: bool) -> None:
    db, _, ids = history_db
    out = tmp_path / "report"
    index = write_report(db, out, inline=inline, image_format="svg" if inline else "png")
    text = index.read_text()
    assert f"Run {ids[-1]} against the previous run, run {ids[-2]}: kernels" in text
    assert "Performance vs memory footprint" in text and "History (potts" in text
    assert len(list((out / "img").glob("*.png"))) == len(list((out / "img").glob("*.svg"))) > 0
    browser = _chromium()
    if browser is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    check = out / "check.html"  # the page plus a script that counts images that failed to load
    check.write_text(text.replace("</body>", CHECK))
    profile = tempfile.mkdtemp()
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={profile}",
        "--virtual-time-budget=10000",
        "--enable-logging=stderr",
        "--v=0",
    ]
    proc = subprocess.run(
        [browser, *flags, "--dump-dom", check.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HOME": profile},
    )
    shutil.rmtree(profile, ignore_errors=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    images = re.search(r'data-images="(\d+)"', proc.stdout)
    broken = re.search(r'data-broken="(\d+)"', proc.stdout)
    assert images and broken, proc.stdout[:500]
    assert int(images.group(1)) >= 5 and int(broken.group(1)) == 0
    console = [ln for ln in proc.stderr.splitlines() if "CONSOLE" in ln or "Failed to load" in ln]
    assert console == [], console


def test_report_command_json(history_db, tmp_path: Path) -> None:
    from tests.regress.test_cli import cli

    _, url, _ = history_db
    proc = cli("report", "--out", str(tmp_path / "r"), "--db", url, "--json")
    assert proc.returncode == 0, proc.stdout
    assert Path(json.loads(proc.stdout)["index"]).is_file()
