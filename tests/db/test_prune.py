"""``benchdb db prune`` and ``db compact`` on a small history, on SQLite and PostgreSQL.

The history (:func:`build_history`) is a year of runs of one node class, written
through the ORM with old start times: runs nothing needs, the class's baseline, the
run that was the baseline before it, an interrupted run, an open A/B pair (one side
complete, its partner interrupted), a run the user keeps, and two recent runs.

``compare`` (the newest run against the baseline) and ``history`` read point
statistics and answer exactly as before the prune.  ``predict`` answers with the
same times, rates, points and flags; its uncertainty is the relative IQR of *all*
the samples its curve pools (:mod:`benchdb.predict.curve`), so it changes where
the pruned runs are in that pool (same environment and kernel version): the two
cases are tested apart.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, update

from benchdb.db.baseline import set_baseline
from benchdb.db.comm_models import new_comm_run
from benchdb.db.engine import Database
from benchdb.db.models import CommMeasurement, Measurement, Run
from benchdb.db.prune import Reason, compact_database, parse_cutoff, prune_samples
from benchdb.db.runstate import RunStatus, utcnow
from benchdb.environment import EnvironmentInfo
from benchdb.errors import UserError
from tests.predict.synth import cli
from tests.regress.rows import add_run, other_environment

QUIET = [1.000e-3, 1.004e-3, 0.998e-3, 1.002e-3, 1.001e-3]
SHAPES = [(1000,), (4000,), (16000,), (64000,)]
POINTS = 2 * len(SHAPES)  # stream.triad and stream.copy
CUTOFF = "90d"

SPREAD_KEYS = {"uncertainty_rel", "spread_rel", "model_id"}
"""predict's fields that follow the pooled samples' spread (``model_id``: the fit of
a curve with another spread is stored anew)."""


def samples(drift: float, n: int = len(QUIET)) -> dict[tuple[str, tuple[int, ...]], list[float]]:
    """stream.triad and stream.copy at four sizes, ``drift`` slower than the first run."""
    return {
        (k, shape): [
            QUIET[j % len(QUIET)] * (1 + drift) * (1 + i) * (1 + 0.003 * j) for j in range(n)
        ]
        for k in ("stream.triad", "stream.copy")
        for i, shape in enumerate(SHAPES)
    }


def age(db: Database, run_id: int, days: float) -> None:
    with db.session() as s:
        s.execute(
            update(Run).where(Run.id == run_id).values(started_at=utcnow() - timedelta(days=days))
        )


def make_run(db: Database, days_ago: float, drift: float, **fields: Any) -> int:
    run_id = add_run(db, samples(drift), **fields)
    age(db, run_id, days_ago)
    return run_id


def set_status(db: Database, run_id: int, status: RunStatus) -> None:
    with db.session() as s:
        s.execute(update(Run).where(Run.id == run_id).values(status=status))


def ab_config(side: str, mine: str, partner: str) -> dict[str, Any]:
    """A side of a ``benchdb ab`` pair, as collectors/ab/pair_runs.py records it."""
    return {"mode": "ab", "uuid": mine, "ab": {"side": side, "pair": partner}}


def build_history(db: Database, old: EnvironmentInfo | None = None) -> dict[str, int]:
    """Run ids by role (module docstring); every run but ``recent`` and ``newest`` is
    older than 90 days and, given ``old``, was measured in that environment."""
    env = {"environment": old}
    runs = {
        "old_a": make_run(db, 330, 0.00, **env),
        "former_baseline": make_run(db, 300, 0.01, **env),
        "old_b": make_run(db, 270, -0.01, **env),
        "baseline": make_run(db, 240, 0.00, **env),
        "old_c": make_run(db, 210, 0.02, **env),
        "interrupted": make_run(db, 180, 0.00, **env),
        "ab_base": make_run(db, 150, 0.0, config=ab_config("base", "u-b", "u-c"), **env),
        "ab_change": make_run(db, 150, 0.0, config=ab_config("change", "u-c", "u-b"), **env),
        "kept": make_run(db, 120, 0.01, **env),
        "recent": make_run(db, 30, 0.00),
        "newest": make_run(db, 1, 0.05, tags=["newest"]),
    }
    set_status(db, runs["interrupted"], RunStatus.INTERRUPTED)
    set_status(db, runs["ab_change"], RunStatus.INTERRUPTED)
    set_baseline(db, str(runs["former_baseline"]), reason="first")
    set_baseline(db, str(runs["baseline"]), reason="new compiler")
    return runs


PRUNED = ("old_a", "old_b", "old_c")  # what nothing needs, with --keep of "kept"


@pytest.fixture
def history(db: Database) -> dict[str, int]:
    return build_history(db)


def stored_samples(db: Database) -> dict[int, int]:
    """Samples stored per run."""
    with db.reading() as s:
        found: dict[int, int] = {}
        for run_id, values in s.execute(select(Measurement.run_id, Measurement.samples)):
            found[run_id] = found.get(run_id, 0) + len(values)
        return found


def pruned_ids(db: Database) -> set[int]:
    with db.reading() as s:
        return set(s.scalars(select(Run.id).where(Run.samples_pruned_at.is_not(None))))


def answers(db_url: str, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """The --json answers of predict, compare and history (but predict's ``refit``,
    which says whether this call fitted the curve or found the fit stored)."""
    commands = {
        "predict": ["predict", "-k", "stream.triad", "-s", "3000", "-s", "30000", "-s", "200000"],
        "compare": ["compare", "baseline", "newest"],
        "history": ["history", "--kernel", "stream.triad"],
    }
    out = {}
    for name, args in commands.items():
        proc = cli(capsys, *args, "--db", db_url, "--json")
        assert proc.returncode in (0, 1), proc.stderr
        out[name] = without(json.loads(proc.stdout), {"refit"})
    return out


def without(data: Any, keys: set[str]) -> Any:
    """``data`` with ``keys`` left out of every mapping in it."""
    if isinstance(data, dict):
        return {k: without(v, keys) for k, v in data.items() if k not in keys}
    if isinstance(data, list):
        return [without(v, keys) for v in data]
    return data


def prune_and_compact(db_url: str, keep: int, capsys: pytest.CaptureFixture[str]) -> dict:
    proc = cli(capsys, "db", "prune", "--keep", str(keep), "--db", db_url, "--json")
    assert proc.returncode == 0, proc.stderr
    assert cli(capsys, "db", "compact", "--db", db_url).returncode == 0
    return json.loads(proc.stdout)


def test_predict_compare_and_history_answer_the_same_after_prune_and_compact(
    db_url: str, db: Database, capsys: pytest.CaptureFixture[str]
) -> None:
    """The old runs were measured before an OS update: predict's curve rests on the
    two recent runs, compare and history on every run's statistics."""
    runs = build_history(db, old=other_environment(kernel_release="5.15.0-old"))
    before = answers(db_url, capsys)
    report = prune_and_compact(db_url, runs["kept"], capsys)
    assert (report["runs"], report["points"]) == (len(PRUNED), len(PRUNED) * POINTS)
    assert report["samples"] == len(PRUNED) * POINTS * len(QUIET)
    assert answers(db_url, capsys) == before


def test_pruned_runs_in_predicts_pool_change_only_its_spread(
    db_url: str, db: Database, history: dict[str, int], capsys: pytest.CaptureFixture[str]
) -> None:
    before = answers(db_url, capsys)
    prune_and_compact(db_url, history["kept"], capsys)
    after = answers(db_url, capsys)
    assert {k: after[k] for k in ("compare", "history")} == {
        k: before[k] for k in ("compare", "history")
    }
    assert without(after["predict"], SPREAD_KEYS) == without(before["predict"], SPREAD_KEYS)
    assert [p["samples"] for p in after["predict"]["lookup"]["points"]] == [
        p["samples"] for p in before["predict"]["lookup"]["points"]
    ]  # pruned samples still count


def test_what_a_run_still_needs_keeps_its_samples(db: Database, history: dict[str, int]) -> None:
    report = prune_samples(db, parse_cutoff(CUTOFF), keep={history["kept"]})
    pruned = {history[r] for r in PRUNED}
    assert report.runs == len(pruned)
    assert report.kept == {
        Reason.BASELINE: (history["former_baseline"], history["baseline"]),
        Reason.UNFINISHED: (history["interrupted"], history["ab_change"]),
        Reason.NAMED: (history["kept"],),
        Reason.AB: (history["ab_base"],),
    }
    stored = stored_samples(db)
    assert {r for r, n in stored.items() if n == 0} == pruned == pruned_ids(db)
    assert all(stored[r] == POINTS * len(QUIET) for r in history.values() if r not in pruned)
    with db.reading() as s:
        counts = s.scalars(select(Measurement.pass_counts).where(Measurement.run_id.in_(pruned)))
        assert set(map(tuple, counts)) == {(len(QUIET),)}  # how many samples each point had
    set_status(db, history["ab_change"], RunStatus.COMPLETE)  # the pair closed
    closed = prune_samples(db, parse_cutoff(CUTOFF), keep={history["kept"]})
    assert closed.runs == 2 and Reason.AB not in closed.kept
    assert {history["ab_base"], history["ab_change"]} < pruned_ids(db)


def test_a_dry_run_changes_nothing_and_a_second_prune_finds_nothing(
    db: Database, history: dict[str, int]
) -> None:
    cutoff = parse_cutoff(CUTOFF)
    dry = prune_samples(db, cutoff, dry_run=True)
    assert stored_samples(db) == {r: POINTS * len(QUIET) for r in history.values()}
    assert not pruned_ids(db)
    done = prune_samples(db, cutoff)
    assert (dry.runs, dry.points, dry.samples, dry.json_bytes, dry.kept) == (
        done.runs, done.points, done.samples, done.json_bytes, done.kept,
    )  # fmt: skip
    assert done.runs == len(PRUNED) + 1 and done.json_bytes > 0  # "kept" not named
    again = prune_samples(db, cutoff)
    assert (again.runs, again.already) == (0, done.runs)


def test_an_interrupted_prune_leaves_each_run_whole_or_pruned(
    db: Database, history: dict[str, int]
) -> None:
    def stop(done: int, todo: int) -> None:
        raise KeyboardInterrupt

    cutoff = parse_cutoff(CUTOFF)
    with pytest.raises(KeyboardInterrupt):
        prune_samples(db, cutoff, batch=2, progress=stop)
    stored, marked = stored_samples(db), pruned_ids(db)
    assert marked == {history["old_a"], history["old_b"]}
    assert all((stored[r] == 0) == (r in marked) for r in history.values())
    seen: list[tuple[int, int]] = []
    rest = prune_samples(db, cutoff, batch=1, progress=lambda *p: seen.append(p))
    assert (rest.runs, rest.already) == (2, 2)
    assert seen == [(1, 3), (2, 3), (3, 3)]  # the open A/B side counts as done, kept


def test_communication_points_lose_their_samples_too(db: Database) -> None:
    point = {
        "benchmark": "pingpong", "ranks": 2, "placement": "intra-socket", "message_bytes": 8,
        "repetitions": 100, "samples": [1e-6] * 5, "evidence": {"wall_s": [1e-4] * 5},
        "set_aside": {"t_s": [3e-6], "pass": [0]}, "t_min": 1e-6, "t_median": 1e-6,
        "t_iqr": 0.0, "t_cv": 0.0, "flags": [],
    }  # fmt: skip
    run = new_comm_run(db, kind="comm", status="complete", config={}, tags=[], points=[point])
    age(db, run, 200)
    report = prune_samples(db, parse_cutoff(CUTOFF))
    assert (report.runs, report.points, report.samples, report.set_aside) == (1, 1, 5, 1)
    with db.reading() as s:
        row = s.scalars(select(CommMeasurement)).one()
        assert (row.samples, row.evidence, row.set_aside, row.t_median) == ([], {}, {}, 1e-6)


def test_commands_that_judge_samples_name_the_pruned_run(
    db_url: str, db: Database, history: dict[str, int], capsys: pytest.CaptureFixture[str]
) -> None:
    prune_samples(db, parse_cutoff(CUTOFF))
    old = history["old_a"]
    proc = cli(capsys, "compare", str(old), "newest", "--db", db_url)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"run {old}'s raw samples were pruned on" in proc.stderr
    assert "benchdb history" in proc.stderr
    shown = cli(capsys, "measurements", "show", "--run", str(old), "--db", db_url, "--json")
    rows = json.loads(shown.stdout)
    assert len(rows) == POINTS
    assert all(r["samples"] == [] and r["samples_pruned_at"] for r in rows)
    assert all(r["t_median"] > 0 and r["valid"] for r in rows)
    table = cli(capsys, "measurements", "show", "--run", str(old), "--db", db_url)
    assert "pruned on" in table.stderr and "INVALID" not in table.stdout


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--older-than", "ninety"], "neither an age nor a date"),
        (["--older-than", "-5d"], "cannot be negative"),
        (["--older-than", "2999-01-01"], "in the future"),
        (["--keep", "999"], "--keep 999: no such run"),
        (["--keep", "x1"], "--keep 'x1' is not a run id"),
    ],
)
def test_bad_input_exits_2_and_changes_nothing(
    sqlite_url: str, capsys: pytest.CaptureFixture[str], args: list[str], needle: str
) -> None:
    from benchdb.db.engine import open_database

    db = open_database(sqlite_url)
    run = make_run(db, 200, 0.0)
    proc = cli(capsys, "db", "prune", *args, "--db", sqlite_url)
    assert proc.returncode == 2 and needle in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert stored_samples(db) == {run: POINTS * len(QUIET)} and not pruned_ids(db)
    db.close()


def test_ages_and_dates() -> None:
    now = utcnow()
    assert parse_cutoff("90d", now) == now - timedelta(days=90)
    assert parse_cutoff("2w", now) == now - timedelta(days=14)
    assert parse_cutoff("1y", now) == now - timedelta(days=365)
    assert parse_cutoff("0d", now) == now
    assert parse_cutoff("2024-02-29", now).isoformat() == "2024-02-29T00:00:00+00:00"
    with pytest.raises(UserError):
        parse_cutoff("90 days", now)


def test_compact_returns_what_prune_freed(db_url: str, db: Database) -> None:
    """On PostgreSQL only ``--full`` shrinks the files (plain VACUUM keeps the space
    for new rows), and by less than the JSON text: TOAST stored it compressed."""
    runs = [add_run(db, samples(0.0, n=3000)) for _ in range(3)]
    for run in runs:
        age(db, run, 200)
    compact_database(db)  # a baseline without the free pages of the writes above
    report = prune_samples(db, parse_cutoff(CUTOFF))
    assert report.json_bytes > 3 * POINTS * 3000 * 15
    compacted = compact_database(db, full=True)
    freed = compacted.bytes_before - compacted.bytes_after
    assert freed > report.json_bytes / (2 if db.backend == "sqlite" else 10)


@pytest.mark.parametrize("command", ["prune", "compact"])
def test_a_database_that_is_not_there_is_not_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    target = tmp_path / "typo" / "bench.sqlite"
    proc = cli(capsys, "db", command, "--db", f"sqlite:///{target}")
    assert proc.returncode == 2 and f"no database at {target}" in proc.stderr
    assert not target.parent.exists()
