"""What benchdb's commands cost when the database holds a year of history (issue 56).

    # a template: one real quick collection of this machine (about 2 minutes)
    .venv/bin/benchdb collect --quick --db sqlite:////tmp/scale/template.sqlite
    # write 1000 runs of it (SQLite; a postgresql+psycopg:// URL works the same)
    .venv/bin/python benchmarks/scale.py generate --template sqlite:////tmp/scale/template.sqlite \\
        --db sqlite:////tmp/scale/h1000.sqlite --runs 1000
    # time the user-facing commands on it: cold (first) and warm (median of 3), peak RSS
    .venv/bin/python benchmarks/scale.py measure --db sqlite:////tmp/scale/h1000.sqlite
    # the growth exponent of each command over several sizes, from measure's --json files
    .venv/bin/python benchmarks/scale.py growth h1000.json h10000.json h100000.json

``generate`` writes through benchdb's own write path (:mod:`scale_history`) and prints
how long the writing took per point.  ``measure`` runs every command in a fresh process
(wall time including the interpreter's start, and the process's peak resident memory
from ``wait4``), and prints the database's bytes per stored sample.  A benchmark, not a
test: the machine is shared, so read the figures beside their repeat spread.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scale_history import HistorySpec, Written, generate, read_template

BENCHDB = str(Path(sys.executable).parent / "benchdb")


# ---------------------------------------------------------------- generate


def _print_progress(w: Written) -> None:
    print(
        f"  {w.runs} runs, {w.points} points, {w.samples} samples, "
        f"{w.seconds:.0f} s ({w.seconds_per_point * 1e3:.2f} ms a point)",
        file=sys.stderr,
        flush=True,
    )


def cmd_generate(args: argparse.Namespace) -> int:
    from benchdb.db.engine import open_database

    template = read_template(open_database(args.template, upgrade=False))
    spec = HistorySpec(
        runs=args.runs,
        hosts=args.hosts,
        classes=args.classes,
        commits=args.commits,
        slowdowns=args.slowdowns,
        ci_kernels=None if args.ci_kernels == "all" else tuple(args.ci_kernels.split(",")),
        full_every=args.full_every,
        seed=args.seed,
    )
    db = open_database(args.db)
    written = generate(db, template, spec, progress=_print_progress)
    print(
        f"wrote {written.runs} runs, {written.points} points, {written.samples} samples "
        f"in {written.seconds:.1f} s: {written.seconds_per_point * 1e3:.2f} ms a point "
        f"(template: {len(template)} points)"
    )
    for p in written.planted:
        print(f"planted: {p.kernel} {p.factor:g}x from commit {p.commit}")
    return 0


def cmd_replicate(args: argparse.Namespace) -> int:
    """Copy every run of a PostgreSQL history ``--times`` - 1 more times, by SQL.

    Not the write path: a shortcut to a 10^5-run PostgreSQL database from a 10^4-run one
    written by ``generate`` (whose PostgreSQL writes take hours at 10^5 on this machine),
    for measuring the read side.  Copy k of a run starts k seconds after it."""
    from sqlalchemy import create_engine, text

    from benchdb.db.models import Measurement, Run

    if not args.db.startswith("postgresql"):
        raise SystemExit("replicate is for PostgreSQL; generate SQLite histories directly")
    run_cols = [c.key for c in Run.__table__.columns if c.key not in ("id", "uuid", "started_at")]
    point_cols = [c.key for c in Measurement.__table__.columns if c.key not in ("id", "run_id")]
    engine = create_engine(args.db)
    t0 = time.perf_counter()
    for k in range(1, args.times):
        with engine.begin() as conn:
            conn.execute(
                text(
                    f"INSERT INTO run (uuid, started_at, {', '.join(run_cols)}) "
                    f"SELECT uuid || '-{k}', started_at + make_interval(secs => {k}), "
                    f"{', '.join(run_cols)} FROM run WHERE uuid NOT LIKE '%-%'"
                )
            )
            conn.execute(
                text(
                    f"INSERT INTO measurement (run_id, {', '.join(point_cols)}) "
                    f"SELECT copy.id, {', '.join('m.' + c for c in point_cols)} "
                    "FROM measurement m JOIN run r ON m.run_id = r.id "
                    f"JOIN run copy ON copy.uuid = r.uuid || '-{k}' "
                    "WHERE r.uuid NOT LIKE '%-%'"
                )
            )
        print(f"copy {k} of {args.times - 1}: {time.perf_counter() - t0:.0f} s", flush=True)
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text("VACUUM ANALYZE"))
    return 0


# ---------------------------------------------------------------- measure


@dataclass(frozen=True)
class Timing:
    """One command's cost: cold (first run) and warm (median of the rest) wall seconds,
    the spread of the warm runs, the warm runs' median CPU seconds (user + system: what a
    shared host's other tenants change least), and the largest peak resident memory."""

    name: str
    cold_s: float
    warm_s: float
    warm_spread_s: float
    cpu_s: float
    max_rss_mb: float
    note: str = ""


def run_once(
    argv: Sequence[str], env: dict[str, str] | None = None
) -> tuple[float, float, float, int, str]:
    """(wall seconds, CPU seconds, peak RSS in MB, exit status, stderr's last line) of one
    process."""
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        lines = err.read().decode(errors="replace").strip().splitlines()
    cpu = usage.ru_utime + usage.ru_stime
    return wall, cpu, usage.ru_maxrss / 1024, proc.returncode, lines[-1] if lines else ""


def time_command(
    name: str,
    argv: Sequence[str],
    repeats: int,
    ok: Sequence[int] = (0,),
    prepare=None,
    env: dict[str, str] | None = None,
) -> Timing:
    walls, cpus, rss = [], [], []
    for _ in range(repeats + 1):
        if prepare is not None:
            prepare()
        wall, cpu, mb, code, last = run_once(argv, env)
        if code not in ok:
            nan = math.nan
            return Timing(name, nan, nan, nan, nan, mb, f"exit {code}: {last}")
        walls.append(wall)
        cpus.append(cpu)
        rss.append(mb)
    warm, warm_cpu = walls[1:] or walls, cpus[1:] or cpus
    return Timing(
        name,
        walls[0],
        statistics.median(warm),
        max(warm) - min(warm),
        statistics.median(warm_cpu),
        max(rss),
    )


SCENARIO_GRID = 5040  # divisible by every divisor of every rank count below


def decompositions(target: int) -> list[int]:
    """Rank counts dividing :data:`SCENARIO_GRID`, smallest first, whose px x py
    decompositions of the square grid number at least ``target``."""
    ranks, total = [], 0
    for r in range(1, SCENARIO_GRID + 1):
        if SCENARIO_GRID % r == 0:
            ranks.append(r)
            total += sum(1 for p in range(1, r + 1) if r % p == 0)
            if total >= target:
                break
    return ranks


def _facts(url: str) -> dict[str, int]:
    from sqlalchemy import func, select

    from benchdb.db.engine import open_database
    from benchdb.db.models import Measurement, Run

    db = open_database(url, upgrade=False)
    with db.reading() as s:
        runs = s.scalar(select(func.count()).select_from(Run))
        points = s.scalar(select(func.count()).select_from(Measurement))
        newest = s.scalar(select(func.max(Run.id)).where(Run.status == "complete"))
        samples = s.scalar(select(func.sum(func.json_array_length(Measurement.samples))))
    return {"runs": runs, "points": points, "newest": newest, "samples": samples or 0}


def database_bytes(url: str) -> int:
    """The database's size on disk: the SQLite file (and its WAL), or PostgreSQL's
    ``pg_database_size``."""
    if url.startswith("sqlite"):
        path = Path(url.split("///", 1)[1])
        return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    with engine.connect() as conn:
        return int(conn.execute(text("SELECT pg_database_size(current_database())")).scalar())


def commands(url: str, facts: dict[str, int], work: Path) -> list[tuple[str, list[str], dict]]:
    """The user-facing commands of issue 56, as (name, argv, options)."""
    shapes = work / "shapes.txt"
    rng = np.random.default_rng(0)
    shapes.write_text("".join(f"{m}x{n}\n" for m, n in rng.integers(20, 2000, size=(1000, 2))))
    ranks = ",".join(str(r) for r in decompositions(256))
    db = ["--db", url]
    export = work / "export.json"
    imported = work / "imported.sqlite"

    def fresh_import_target() -> None:
        for p in work.glob("imported.sqlite*"):
            p.unlink()

    def fresh_export_file() -> None:
        export.unlink(missing_ok=True)

    return [
        ("benchdb --help (the start-up floor)", ["--help"], {}),
        ("predict 1 shape", ["predict", "-k", "stream.triad", "-s", "100000", *db], {}),
        (
            "predict 1000 shapes --json",
            ["predict", "-k", "shallow.cu", "--shapes-file", str(shapes), "--json", *db],
            {},
        ),
        (
            "app predict",
            [
                "app",
                "predict",
                "--grid",
                "1024x1024",
                "--decomp",
                "2x1",
                "--steps",
                "100",
                "--machine-file",
                "bluegene_l",
                *db,
            ],
            {},
        ),
        (
            f"scenario ({ranks.count(',') + 1} rank counts, >=256 decomps)",
            [
                "scenario",
                "--grid",
                f"{SCENARIO_GRID}x{SCENARIO_GRID}",
                "--ranks",
                ranks,
                "--steps",
                "100",
                "--machine-file",
                "bluegene_l",
                *db,
            ],
            {},
        ),
        (
            "measurements show --run",
            ["measurements", "show", "--run", str(facts["newest"]), *db],
            {},
        ),
        ("runs list", ["runs", "list", *db], {}),
        ("compare baseline latest", ["compare", "baseline", "latest", *db], {"ok": (0, 1)}),
        ("history --kernel stream.triad", ["history", "--kernel", "stream.triad", *db], {}),
        ("validate -k stream.triad", ["validate", "-k", "stream.triad", *db], {}),
        (
            "report",
            ["report", "--out", str(work / "report"), *db],
            {"prepare": lambda: _clear(work / "report")},
        ),
        (
            "export (whole database, json)",
            ["export", "--out", str(export), *db],
            {"prepare": fresh_export_file},
        ),
        (
            "import (that file, empty sqlite)",
            ["import", str(export), "--db", f"sqlite:///{imported}"],
            {"prepare": fresh_import_target},
        ),
    ]


def _clear(path: Path) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def cmd_measure(args: argparse.Namespace) -> int:
    from benchdb.db.urls import child_environment, redact

    facts = _facts(args.db)
    size = database_bytes(args.db)
    print(
        f"{redact(args.db)}: {facts['runs']} runs, {facts['points']} points, {facts['samples']} "
        f"samples, {size / 1e6:.1f} MB, {size / max(facts['samples'], 1):.0f} bytes a sample"
    )
    only = set(args.only.split(",")) if args.only else None
    skip = set(args.skip.split(",")) if args.skip else set()
    timings = []
    with tempfile.TemporaryDirectory(dir=args.work) as tmp:
        work = Path(tmp)
        bare, env = child_environment(args.db)  # the password in PGPASSWORD, never in argv
        for name, argv, opts in commands(bare, facts, work):
            if (only and not any(o in name for o in only)) or any(k in name for k in skip):
                continue
            t = time_command(name, [BENCHDB, *argv], args.repeats, env=env, **opts)
            if name == "report" and (work / "report" / "index.html").exists():
                t = Timing(**{**asdict(t), "note": f"page {_bytes(work / 'report')} MB"})
            timings.append(t)
            print(
                f"{t.name:48s} cold {t.cold_s:7.2f} s  warm {t.warm_s:7.2f} s "
                f"(spread {t.warm_spread_s:5.2f})  cpu {t.cpu_s:6.2f} s  {t.max_rss_mb:6.0f} MB  "
                f"{t.note}",
                flush=True,
            )
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "db": redact(args.db),
                    **facts,
                    "bytes": size,
                    "timings": [asdict(t) for t in timings],
                },
                indent=1,
            )
        )
    return 0


def _bytes(folder: Path) -> str:
    return f"{sum(p.stat().st_size for p in folder.rglob('*') if p.is_file()) / 1e6:.1f}"


# ---------------------------------------------------------------- growth


def cmd_growth(args: argparse.Namespace) -> int:
    """Each command's exponent b in time ~ runs^b, fitted over the measured sizes."""
    sizes = [json.loads(Path(f).read_text()) for f in args.files]
    sizes.sort(key=lambda d: d["runs"])
    names = [t["name"] for t in sizes[0]["timings"]]
    head = " | ".join(f"{d['runs']} runs" for d in sizes)
    print(f"| command | {head} | exponent |")
    print("|---|" + "---|" * len(sizes) + "---|")
    for name in names:
        row = [next((t for t in d["timings"] if t["name"] == name), None) for d in sizes]
        cells = [
            "-"
            if t is None or math.isnan(t["warm_s"])
            else f"{t['warm_s']:.2f} s (cpu {t['cpu_s']:.2f}), {t['max_rss_mb']:.0f} MB"
            for t in row
        ]
        pairs = [
            (d["runs"], t["warm_s"])
            for d, t in zip(sizes, row, strict=False)
            if t and t["warm_s"] > 0
        ]
        slope = (
            np.polyfit(np.log([p[0] for p in pairs]), np.log([p[1] for p in pairs]), 1)[0]
            if len(pairs) > 1
            else math.nan
        )
        print(f"| {name} | {' | '.join(cells)} | {slope:.2f} |")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate", help="write a history of runs through benchdb's write path")
    g.add_argument("--template", required=True, help="database URL of one real collection")
    g.add_argument("--db", required=True, help="database URL to write (created if new)")
    g.add_argument("--runs", type=int, required=True)
    g.add_argument("--hosts", type=int, default=8)
    g.add_argument("--classes", type=int, default=2)
    g.add_argument("--commits", type=int, default=100)
    g.add_argument("--slowdowns", type=int, default=3)
    g.add_argument(
        "--ci-kernels",
        default="stream.triad,stencil2d5",
        help="kernels a CI run measures (comma-separated, or all)",
    )
    g.add_argument("--full-every", type=int, default=50, help="every Nth run is a whole sweep")
    g.add_argument("--seed", type=int, default=1)
    g.set_defaults(func=cmd_generate)
    r = sub.add_parser("replicate", help="copy a PostgreSQL history's runs N-1 times, by SQL")
    r.add_argument("--db", required=True)
    r.add_argument("--times", type=int, default=10)
    r.set_defaults(func=cmd_replicate)
    m = sub.add_parser("measure", help="time the user-facing commands on a database")
    m.add_argument("--db", required=True)
    m.add_argument("--repeats", type=int, default=3)
    m.add_argument("--only", help="comma-separated parts of command names to time")
    m.add_argument("--skip", help="comma-separated parts of command names not to time")
    m.add_argument("--work", default=None, help="folder for the temporary files")
    m.add_argument("--json", help="also write the figures to this file")
    m.set_defaults(func=cmd_measure)
    gr = sub.add_parser("growth", help="fit each command's growth over measure's --json files")
    gr.add_argument("files", nargs="+")
    gr.set_defaults(func=cmd_growth)
    args = ap.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
