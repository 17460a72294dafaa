"""Bad inputs and faults across every command, each as a real ``benchdb`` process.

Every case must end as the project's convention says (docs/design.md "Conventions"):
exit status 2 (or the case's documented code), exactly one line on stderr, no
traceback, within 30 s, and no file created or changed: each case runs in a folder of
its own holding copies of the scratch files (a populated database, files that are no
benchdb database, a read-only database, export files, folders), whose checksums are
compared before and after.

    python benchmarks/bad_inputs.py              # every case, two at a time
    python benchmarks/bad_inputs.py --jobs 1 --only import

It prints one line per failed case and the totals: cases, passed, failed by reason.
tests/test_bad_inputs_script.py runs a sample of the cases in CI.
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

LIMIT_S = 30.0
BIG = "99999999999999999999999"
POPULATED = "bench.sqlite"


@dataclass(frozen=True)
class Case:
    """``benchdb ARGS`` in a case folder; ``{d}`` in an argument is that folder."""

    group: str
    args: tuple[str, ...]
    code: int = 2
    as_user: bool = False  # file permissions bind it even as root

    @property
    def name(self) -> str:
        return f"{self.group}: benchdb {' '.join(self.args)}"


# ------------------------------------------------------------------ the scratch files


def _benchdb(*args: str, env: dict[str, str] | None = None) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "benchdb", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )
    if proc.returncode != 0:
        raise SystemExit(f"setting up: benchdb {' '.join(args)} failed:\n{proc.stderr}")


def _other_application(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE notes (body TEXT)")
        conn.execute("INSERT INTO notes VALUES ('mine')")
    conn.close()


def _damage_deep(source: Path, target: Path) -> None:
    """A copy of ``source`` whose run and measurement tables are overwritten: its schema
    page reads, the damage shows only when a query reaches them."""
    shutil.copy(source, target)  # in WAL mode, as benchdb keeps it: no reader converts it
    with sqlite3.connect(target) as conn:
        roots = [r for (r,) in conn.execute(
            "SELECT rootpage FROM sqlite_master WHERE name IN ('run', 'measurement')"
        )]  # fmt: skip
        page = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    data = bytearray(target.read_bytes())
    for root in roots:
        data[(root - 1) * page : root * page] = b"\xa5" * page
    target.write_bytes(bytes(data))


def make_scratch(folder: Path) -> None:
    """The files every case gets a copy of."""
    populated = folder / POPULATED
    _benchdb(
        "collect", "--kernels", "stream.triad", "--footprints", "16KiB,64KiB,256KiB,1MiB",
        "--sample-time", "0.002", "--passes", "1", "--quiet", "--db", f"sqlite:///{populated}",
    )  # fmt: skip
    with sqlite3.connect(populated) as conn:  # every page in the file, no -wal beside it
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    _benchdb("export", "--out", str(folder / "good.json"), "--db", f"sqlite:///{populated}")
    (folder / "junk.sqlite").write_text("my notes, not a database\n")
    (folder / "empty.sqlite").touch()
    _other_application(folder / "other.sqlite")
    _other_application(folder / "damaged.sqlite")
    with (folder / "damaged.sqlite").open("r+b") as f:
        f.seek(16)
        f.write(b"\xff" * 84)
    _damage_deep(populated, folder / "deep.sqlite")
    good = [json.loads(line) for line in (folder / "good.json").read_text().splitlines()]
    second = [i for i, item in enumerate(good) if "measurement" in item][1]
    for name, change in BAD_ROWS.items():  # the export's second measurement record changed
        items = json.loads(json.dumps(good))
        items[second]["measurement"].update(change)
        (folder / f"row-{name}.json").write_text("".join(json.dumps(i) + "\n" for i in items))
    (folder / "notes.json").write_text('{"my": "notes"}')
    (folder / "garbage.csv").write_text("a,b\n1,2\n")
    (folder / "binary.parquet").write_bytes(os.urandom(256))
    (folder / "shapes.bin").write_bytes(bytes(range(256)))
    for name in ("d.csv", "d.png", "ro", "rodb"):
        (folder / name).mkdir()
    (folder / "a-file").write_text("a file")
    (folder / "mine").mkdir()  # a folder of the user's with a page of their own
    (folder / "mine" / "index.html").write_text("<p>my own page</p>\n")
    (folder / "mine.png").write_bytes(b"my own picture")
    shutil.copy(populated, folder / "rodb" / POPULATED)
    (folder / "rodb" / POPULATED).chmod(0o444)
    (folder / "rodb").chmod(0o555)
    (folder / "ro").chmod(0o555)


BAD_ROWS = {
    "nosamples": {"samples": [], "pass_counts": []},  # none stored, none pruned
    "negative": {"t_median": -1},
    "nan": {"samples": [1e-3, float("nan")]},
    "shape": {"shape": [0]},
    "threads": {"threads": 0},
    "rate": {"flop_rate": -5.0},
}


# ------------------------------------------------------------------ the cases

READERS: list[tuple[str, ...]] = [
    ("runs", "list"),
    ("measurements", "show", "-k", "stream.triad"),
    ("predict", "-k", "stream.triad", "-s", "4096"),
    ("predict", "-k", "myprogram.cu", "-s", "100x100"),
    ("advise", "-k", "shallow.cu", "-s", "64x64"),
    ("validate",),
    ("compare", "1", "latest"),
    ("history", "-k", "stream.triad"),
    ("baseline", "show"),
    ("comm", "show"),
    ("comm", "predict", "--decomp", "2x1", "--local", "64x64"),
    ("comm", "fit"),
    ("scenario", "--grid", "256x256", "--ranks", "1,2"),
    ("app", "predict", "--grid", "256x256", "--decomp", "1x1", "--steps", "10"),
    ("db", "current"),
    ("machine", "list"),
    ("report", "--out", "{d}/report"),
    ("export", "--out", "{d}/x.csv"),
    ("plot", "curve", "-k", "stream.triad", "--out", "{d}/c.png"),
    ("plot", "roofline", "--out", "{d}/r.png"),
]
WRITERS: list[tuple[str, ...]] = [
    ("machine", "register"),
    ("baseline", "set", "1"),
    ("import", "{d}/good.json"),
    ("db", "upgrade"),
    ("collect", "-k", "stream.triad", "--sizes", "64", "--quick"),
    ("refine", "-k", "stream.triad", "--time-budget", "5"),
]
NOT_BENCHDB = ("junk", "other", "damaged")


def _db(name: str) -> tuple[str, str]:
    return ("--db", f"sqlite:///{{d}}/{name}")


def database_cases() -> Iterator[Case]:
    for kind in NOT_BENCHDB:
        for args in READERS + WRITERS:
            yield Case(f"{kind} file", (*args, *_db(f"{kind}.sqlite")))
    for args in READERS:
        yield Case("empty file", (*args, *_db("empty.sqlite")))
        yield Case("no file", (*args, *_db("typo/none.sqlite")))
    yield Case("empty file", ("kernels", *_db("empty.sqlite")))
    for args in [
        READERS[0], READERS[1], READERS[6], READERS[17], READERS[2], READERS[14], *WRITERS
    ]:  # fmt: skip
        yield Case("damaged page", (*args, *_db("deep.sqlite")))
    for args in WRITERS:
        yield Case("read-only database", (*args, *_db(f"rodb/{POPULATED}")), as_user=True)
    yield Case("schemeless", ("runs", "list", "--db", "{d}/notes.txt"))
    yield Case("bad url", ("runs", "list", "--db", "nosuch://x"))
    yield Case("bad url", ("runs", "list", "--db", "postgresql+psycopg://u@127.0.0.1:1/x"))
    for url in ("sqlite:///{d}/fifo", "sqlite:////dev/null", "sqlite:///{d}/d.csv"):
        for args in [READERS[0], READERS[2], READERS[14], *WRITERS]:
            yield Case("database no file", (*args, "--db", url))
    for url in ("sqlite://", "sqlite:///:memory:"):
        for args in [READERS[0], READERS[14], *WRITERS]:
            yield Case("in-memory database", (*args, "--db", url))


def integer_cases() -> Iterator[Case]:
    for args in [
        ("runs", "list", "--limit", BIG),
        ("compare", BIG, "latest"),
        ("compare", "1", BIG),
        ("baseline", "set", BIG),
        ("measurements", "show", "--run", BIG),
        ("export", "--out", "{d}/x.csv", "--run", BIG),
        ("predict", "-k", "stream.triad", "-s", BIG),
        ("predict", "-k", "shallow.cu", "-s", f"64x{BIG}"),
        ("predict", "-k", "stream.triad", "-s", "4096", "--iterations", BIG),
        ("predict", "-k", "stream.triad", "--range", f"64:{BIG}:4"),
        ("advise", "-k", "shallow.cu", "-s", f"2048x{BIG}"),
        ("app", "predict", "--grid", f"{BIG}x256", "--decomp", "1x1"),
        ("scenario", "--grid", "256x256", "--ranks", BIG),
        ("comm", "predict", "--decomp", "2x1", "--local", f"{BIG}x4"),
        ("validate", "--fit-run", BIG),
        ("collect", "--sizes", BIG, "-k", "stream.triad"),
        ("collect", "--samples", BIG, "-k", "stream.triad"),
        ("measurements", "show", "--threads", BIG),
        ("history", "-k", "stream.triad", "--threads", BIG),
        ("comm", "fit", "--run", BIG),
    ]:
        yield Case("64-bit", (*args, *_db(POPULATED)))


def option_cases() -> Iterator[Case]:
    for args in [
        ("predict", "-k", "stream.triad", "-s", "0x5"),
        ("predict", "-k", "stream.triad", "-s", "abc"),
        ("predict", "-k", "stream.triad", "-s", "4096", "--method", "bogus"),
        ("predict", "-k", "stream.triad", "-s", "4096", "--threads", "0"),
        ("predict", "-k", "stream.triad", "--range", "100:1000:100000000"),
        ("predict", "-k", "stream.triad", "--range", "100:1000"),
        ("predict", "-k", "stream.triad", "--shapes-file", "{d}/shapes.bin"),
        ("predict", "-k", "stream.triad", "--shapes-file", "{d}/missing.txt"),
        ("predict", "-k", "stream.triad"),
        ("predict", "-k", "nosuch.kernel", "-s", "64"),
        ("predict", "-k", "stream.triad", "-s", "4096", "--iterations", "abc"),
        ("advise", "-k", "shallow.cu", "-s", "64x64", "--pad", "99"),
        ("advise", "-k", "shallow.cu", "-s", "64x64", "--top", "0"),
        ("collect", "--samples", "0"),
        ("collect", "--samples", "1000000000"),
        ("collect", "--tag", ""),
        ("collect", "-k", "nosuch"),
        ("collect", "--sizes", "0x5"),
        ("collect", "--footprints", "banana"),
        ("collect", "--precision", "float16"),
        ("collect", "--threads", "0"),
        ("collect", "--resume", "9999"),
        ("collect", "--nope"),
        ("measurements", "show", "--run", "999"),
        ("measurements", "show", "--threads", "-4"),
        ("measurements", "show", "-k", "nosuch"),
        ("runs", "list", "--limit", "0"),
        ("validate", "-k", "nosuch,other"),
        ("compare", "1", "nosuchtag"),
        ("compare", "1", "1", "--threshold", "0"),
        ("history", "-k", "stream.triad", "--detector", "bogus"),
        ("baseline", "set", "999"),
        ("scenario", "--grid", "256x256", "--ranks", "0"),
        ("scenario", "--grid", "7x7", "--ranks", "2"),
        ("app", "predict", "--grid", "64x64", "--decomp", "3x1"),
        ("app", "predict", "--grid", "64x64", "--decomp", "1x1", "--steps", "-1"),
        ("app", "calibrate", "--ranks", "-2"),
        ("app", "calibrate", "--ranks", "2", "--sizes", "0x5"),
        ("app", "calibrate", "--ranks", "-2", "--near", "64x64"),
        ("app", "calibrate", "--timeout", "-1"),
        ("app", "run", "--grid", "64x64", "--decomp", "2x1", "--steps", "-1"),
        ("app", "run", "--grid", "64x64", "--decomp", "2x1", "--timeout", "-1"),
        ("comm", "predict", "--decomp", "0x1", "--local", "64x64"),
        ("refine", "-k", "stream.triad", "--rounds", "0"),
        ("kernels", "--machine", "nosuch"),
        ("machine", "show", "extra"),
        ("db", "bogus"),
        ("bogus",),
        ("plot", "curve", "-k", "stream.triad", "--out", "{d}/c.gif"),
        ("export", "--out", "{d}/x.txt"),
        ("ab", "--sizes", "1000", "--change-env", "NUMBA_OPT"),
        ("ab", "--sizes", "1000", "--order", "sideways"),
        ("ab", "--sizes", "1000", "--change-python", "/no/such/python"),
        ("ab", "--sizes", "1000", "--kernels", "nosuchkernel"),
        ("ab", "--sizes", "1000", "--pairs", "2"),
        ("ab", "--sizes", "1000", "--threshold", "0"),
        ("ab", "--sizes", "0x5"),
        ("ab", "--sizes", "1000", "--json", "--markdown"),
    ]:
        yield Case("option", (*args, *_db(POPULATED)))
    for args in [
        ("app", "calibrate", "--ranks", "-2"),
        ("predict", "-k", "stream.triad", "-s", "4096", "--method", "bogus"),
        ("collect", "--samples", "0"),
        ("import", "{d}/row-nosamples.json"),
        ("ab", "--sizes", "1000", "--order", "sideways"),
    ]:
        yield Case("option, new database", (*args, *_db("new/bench.sqlite")))


def output_cases() -> Iterator[Case]:
    plot = ("plot", "curve", "-k", "stream.triad", "--out")
    for args, as_user in [
        (("export", "--out", "{d}/d.csv"), False),
        ((*plot, "{d}/d.png"), False),
        (("report", "--out", "{d}/a-file"), False),
        (("export", "--out", "/proc/benchdb-bad-inputs.csv"), False),
        ((*plot, "/proc/benchdb-bad-inputs.png"), False),
        (("report", "--out", "/proc/benchdb-bad-inputs"), False),
        (("export", "--out", "{d}/nofolder/x.csv"), False),
        (("export", "--out", "{d}/ro/x.json"), True),
        ((*plot, "{d}/ro/x.svg"), True),
        (("report", "--out", "{d}/ro/report"), True),
        (("plot", "roofline", "--out", "{d}/ro/r.png"), True),
    ]:
        yield Case("--out", (*args, *_db(POPULATED)), as_user=as_user)


SPECIAL_READERS: list[tuple[str, ...]] = [
    ("predict", "-k", "stream.triad", "--shapes-file", "{p}"),
    ("collect", "--program", "{p}", "--dry-run"),
    ("collect", "--plugin", "{p}", "--dry-run"),
    ("refine", "-k", "stream.triad", "--program", "{p}"),
    ("ab", "--sizes", "1000", "--base-program", "{p}"),
    ("import", "{p}"),
    ("compare", "1", "latest", "--config", "{p}"),
    ("comm", "show", "--machine-file", "{p}"),
    ("app", "predict", "--grid", "64x64", "--decomp", "1x1", "--program", "{p}"),
    ("scenario", "--grid", "256x256", "--ranks", "1,2", "--power-file", "{p}"),
]
NON_FINITE: list[tuple[str, ...]] = [
    ("collect", "-k", "stream.triad", "--time-budget", "{x}"),
    ("collect", "-k", "stream.triad", "--sample-time", "{x}", "--dry-run"),
    ("refine", "-k", "stream.triad", "--time-budget", "{x}"),
    ("ab", "--sizes", "1000", "--threshold", "{x}"),
    ("compare", "1", "latest", "--threshold", "{x}"),
    ("history", "-k", "stream.triad", "--min-change", "{x}"),
    ("comm", "collect", "--timeout", "{x}"),
    ("app", "predict", "--grid", "64x64", "--decomp", "1x1", "--scale-latency", "{x}"),
    ("scenario", "--grid", "256x256", "--ranks", "1,2", "--core-busy-w", "{x}"),
]


def special_cases() -> Iterator[Case]:
    """A FIFO (``{d}/fifo``, made in each case folder), a device, a folder where a file is
    read or written; inf and NaN where a number must be finite; the user's own files."""
    for path in ("{d}/fifo", "/dev/null", "{d}/ro"):
        for args in SPECIAL_READERS:
            yield Case("special file", (*(a.replace("{p}", path) for a in args), *_db(POPULATED)))
    for args in [
        ("export", "--format", "json", "--out", "{d}/fifo"),
        ("export", "--format", "csv", "--out", "/dev/null"),
        ("plot", "roofline", "--out", "{d}/fifo.png"),
        ("report", "--out", "{d}/fifo"),
    ]:
        yield Case("special file", (*args, *_db(POPULATED)))
    for x in ("inf", "-inf", "nan"):
        for args in NON_FINITE:
            yield Case("non-finite", (*(a.replace("{x}", x) for a in args), *_db(POPULATED)))
        yield Case("non-finite, new database", (*NON_FINITE[0][:-1], x, *_db("new/b.sqlite")))
    for args in [
        ("report", "--out", "{d}/mine"),
        ("plot", "curve", "-k", "stream.triad", "--out", "{d}/mine.png"),
        ("export", "--out", "{d}/notes.json"),
        ("export", "--out", "{d}/garbage.csv"),
    ]:
        yield Case("user's file", (*args, *_db(POPULATED)))


def import_cases() -> Iterator[Case]:
    sources = [f"{{d}}/row-{name}.json" for name in BAD_ROWS]
    sources += ["{d}/notes.json", "{d}/garbage.csv", "{d}/binary.parquet", "{d}/missing.json"]
    sources += ["sqlite:///{d}/missing.sqlite", "{d}/junk.sqlite", "{d}/other.sqlite"]
    sources += ["{d}/damaged.sqlite", "{d}/deep.sqlite", "sqlite:///{d}/fifo", "sqlite://"]
    for source in sources:
        yield Case("import", ("import", source, *_db(POPULATED)))
        yield Case("import, new database", ("import", source, *_db("new/bench.sqlite")))


def all_cases() -> list[Case]:
    return [
        *database_cases(),
        *integer_cases(),
        *option_cases(),
        *output_cases(),
        *special_cases(),
        *import_cases(),
    ]


# ------------------------------------------------------------------ running a case

_PR_CAPBSET_DROP, _CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH = 24, 1, 2


def obey_permissions() -> None:
    """In a child about to exec: as root, give up the capabilities that let root write
    a file or folder its mode forbids (a read-only database, a read-only --out folder),
    so the child meets them as a user does; as a user, nothing to do.

    Dropped from the bounding set, they leave the permitted set at exec, which is what
    ``access(2)`` consults for root too.  (tests/clihelpers.py uses it too.)
    """
    if os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH):
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) refused")


def checksums(folder: Path) -> dict[str, str]:
    """Every file and folder under ``folder``: a folder by its name, a file by its bytes,
    a FIFO by its kind."""
    out = {}
    for path in sorted(folder.rglob("*")):
        key = str(path.relative_to(folder))
        if path.is_dir() or not path.is_file():  # a FIFO is never read: that would wait
            out[key] = "dir" if path.is_dir() else "special"
        else:
            out[key] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def _unlock(folder: Path) -> None:
    for path in [folder, *folder.rglob("*")]:
        if path.is_dir():
            path.chmod(0o755)


def run_case(case: Case, scratch: Path, work: Path) -> str | None:
    """None if ``case`` behaved; else why not (the failure's reason first, then detail)."""
    folder = Path(tempfile.mkdtemp(dir=work))
    shutil.copytree(scratch, folder / "f", symlinks=True)
    d = folder / "f"
    for name in ("fifo", "fifo.png"):  # copytree copies no FIFO: made anew in each
        os.mkfifo(d / name)
    before = checksums(d)
    args = [a.replace("{d}", str(d)) for a in case.args]
    env = {**os.environ, "COLUMNS": "200", "XDG_DATA_HOME": str(folder / "data")}
    env.pop("BENCHDB_URL", None)
    t0 = time.monotonic()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "benchdb", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=LIMIT_S,
            preexec_fn=obey_permissions if case.as_user else None,
        )
    except subprocess.TimeoutExpired:
        return f"timeout: more than {LIMIT_S:.0f} s"
    finally:
        _unlock(d)
    took = time.monotonic() - t0
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    after = checksums(d)
    problem = None
    if "Traceback" in proc.stderr:
        problem = f"traceback: {lines[-1] if lines else ''}"
    elif proc.returncode != case.code:
        problem = f"exit {proc.returncode}: {(lines or [''])[-1][:160]}"
    elif len(lines) != 1:
        problem = f"{len(lines)} lines on stderr: {' | '.join(lines)[:200]}"
    elif after != before:
        changed = sorted(k for k in {*before, *after} if before.get(k) != after.get(k))
        problem = f"files changed: {', '.join(changed)}"
    elif (folder / "data").exists() or Path("/proc/benchdb-bad-inputs.csv").exists():
        problem = "files changed: a file outside the scratch folder"
    elif took > LIMIT_S:
        problem = f"timeout: {took:.0f} s"
    shutil.rmtree(folder)
    return problem


def run_all(cases: list[Case], jobs: int) -> Counter[str]:
    """Run ``cases``; print each failure; the count of failures by reason (and of all)."""
    totals: Counter[str] = Counter()
    with tempfile.TemporaryDirectory(prefix="benchdb-bad-inputs-") as tmp:
        scratch, work = Path(tmp) / "scratch", Path(tmp) / "work"
        scratch.mkdir()
        work.mkdir()
        make_scratch(scratch)
        try:
            with ThreadPoolExecutor(jobs) as pool:
                results = pool.map(lambda c: (c, run_case(c, scratch, work)), cases)
                for case, problem in results:
                    totals["cases"] += 1
                    if problem is None:
                        totals["passed"] += 1
                        continue
                    totals[f"failed: {problem.split(':')[0]}"] += 1
                    print(f"FAIL {case.name}\n     {problem}", flush=True)
        finally:
            _unlock(scratch)
    return totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2, help="cases run at once (default 2)")
    parser.add_argument("--only", help="only the cases whose group contains this text")
    args = parser.parse_args()
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    cases = [c for c in all_cases() if args.only is None or args.only in c.group]
    if not cases:
        parser.error(f"no case's group contains {args.only!r}")
    t0 = time.monotonic()
    totals = run_all(cases, args.jobs)
    failed = totals["cases"] - totals["passed"]
    print(
        f"{totals['cases']} cases, {totals['passed']} passed, {failed} failed "
        f"({time.monotonic() - t0:.0f} s, {args.jobs} at a time)"
    )
    for reason, n in sorted(totals.items()):
        if reason.startswith("failed"):
            print(f"  {reason}: {n}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
