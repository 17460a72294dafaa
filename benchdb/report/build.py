"""``benchdb report``: a node class's newest kernel collection as a static HTML page.

The runs: :func:`benchdb.regress.pick.pick_runs` (the newest complete kernel
collection and a baseline of the same kind and settings).  The page: which
runs and why, the comparison's verdict and every kernel's change, then per
kernel its curve with the prediction, its change per point and its history
with the steps found, then the communication models.  Charts are plotly
figures; ``index.html`` loads ``plotly.min.js`` written beside it, or carries
it inline (``inline``) so that the one file stands alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from ..comm.summary import CommSummary, comm_summary
from ..db.engine import Database
from ..errors import UserError
from ..outputs import Marker, check_out_folder, head_has, writing_out
from ..predict.source import MachineCaches
from ..regress import RunComparison, compare_runs, get_detector
from ..regress.pick import RunPick, pick_runs
from ..units import fmt_bytes
from . import charts, html, sections
from .content import kernel_contents

PLOTLY_JS = "plotly.min.js"
INDEX = "index.html"


def _is_page(path: Path) -> bool:
    """Whether ``path`` is a page benchdb report wrote (its generator tag)."""
    return head_has(path, html.GENERATOR.encode(), 1024)


def _is_plotly(path: Path) -> bool:
    """Whether ``path`` is plotly.js as plotly ships it (its banner), written by a report."""
    return head_has(path, b"/**\n* plotly.js v", 32)


def report_files(inline: bool) -> dict[str, Marker]:
    """The files a report writes in its folder, each with the marker that makes it ours."""
    return {INDEX: _is_page} if inline else {INDEX: _is_page, PLOTLY_JS: _is_plotly}


def check_report_folder(out: Path, inline: bool = False, force: bool = False) -> Path:
    """``out`` if a report can be written there: a folder benchdb may create, or one
    whose index.html (and plotly.min.js) are absent, a report's own, or ``force``d."""
    return check_out_folder(out, report_files(inline), force=force)


@dataclass(frozen=True)
class Report:
    """A written report: its page, the runs it compares and the comparison's verdict."""

    index: Path
    pick: RunPick
    regressed: list[str] | None  # slower kernels (points with per_point); None: not compared

    def to_dict(self) -> dict[str, Any]:
        pick = self.pick
        return {
            "index": str(self.index.resolve()),
            **pick.scope.to_dict(),
            "collection": pick.collection.run_id,
            "baseline": pick.baseline.run_id if pick.baseline is not None else None,
            "reason": pick.reason,
            "left_out": [{"run_id": o.run.run_id, "why": o.why} for o in pick.left_out],
            "regression": None if self.regressed is None else bool(self.regressed),
            "regressed_kernels": self.regressed,
        }


T = TypeVar("T")


def _identity(items: Iterable[T], **_: Any) -> Iterable[T]:
    return items


def _make_folder(out: Path) -> None:
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(
            f"cannot create {out}: {exc.strerror}; give a writable --out folder"
        ) from exc


def _plotly_script(out: Path, inline: bool, force: bool) -> str:
    """The ``<script>`` loading plotly.js: inline, or from the file written beside the page."""
    from plotly.offline import get_plotlyjs

    source = get_plotlyjs()
    if inline:
        escaped = source.replace("</script", "<\\/script")
        return f"<script>{escaped}</script>"
    path = out / PLOTLY_JS
    if not path.exists() or path.read_bytes() != source.encode():
        with writing_out(path, force=force, ours=_is_plotly) as partial:
            partial.write_text(source, encoding="utf-8")
    return f"<script src='{PLOTLY_JS}'></script>"


def _compare(
    db: Database, pick: RunPick, track: Callable[..., Iterable[Any]]
) -> tuple[RunComparison | None, str | None]:
    if pick.baseline is None:
        return None, None
    try:
        result = compare_runs(
            db,
            str(pick.baseline.run_id),
            str(pick.collection.run_id),
            machine=str(pick.scope.node_class_id),
            host=pick.scope.host,
            track=track,
        )
    except UserError as exc:
        return None, str(exc)
    return result, None


def _comm(db: Database, pick: RunPick) -> tuple[CommSummary | None, str]:
    try:
        return comm_summary(db, str(pick.scope.node_class_id), pick.scope.host), ""
    except UserError as exc:
        return None, f"No communication models for {pick.scope.label}: {exc}"


def write_report(
    db: Database,
    out: Path,
    *,
    machine: str | None = None,
    host: str | None = None,
    inline: bool = False,
    detector: str = "potts",
    force: bool = False,
    track: Callable[..., Iterable[Any]] = _identity,
) -> Report:
    """Write ``out/index.html`` (and ``out/plotly.min.js`` unless ``inline``); a file
    there that a report did not write is replaced only with ``force``.

    Everything is read and checked before the folder is created.
    """
    get_detector(detector)
    check_report_folder(out, inline, force)
    pick = pick_runs(db, machine, host)
    comparison, comparison_error = _compare(db, pick, track)
    caches = MachineCaches.of(pick.scope).caches
    contents = kernel_contents(db, pick, comparison, detector=detector, track=track)
    comm, comm_missing = _comm(db, pick)
    anchors = {c.kernel: html.anchor("k", c.kernel) for c in contents}
    threshold = comparison.threshold if comparison is not None else None
    parts = [sections.runs_part(pick, comparison_error)]
    nav = [("runs", "Runs compared")]
    if comparison is not None:
        parts.append(sections.summary_part(comparison, anchors))
        nav.append(("summary", "Summary"))
    parts.append(
        html.section(
            "kernels",
            f"Kernels of run {pick.collection.run_id}",
            html.para(
                "Per kernel: performance by memory footprint (paper 003: looked up by footprint), "
                "the collection's points filled (a cross: flagged noisy or pathological), the "
                "baseline's open, the prediction's curve and the cache capacities; the change of "
                "each point against the baseline with its confidence interval, coloured by "
                "verdict; the history of each point with the steps the "
                f"{detector} detector found. Hover for values, drag to zoom, double-click to "
                "reset, click a legend entry to hide it.",
                "note",
            ),
            *(sections.kernel_part(c, anchors[c.kernel], caches, threshold) for c in contents),
        )
    )
    parts.append(sections.comm_part(comm, comm_missing))
    nav += [("kernels", "Kernels"), ("comm", "Communication")]
    kernel_nav = [(anchors[c.kernel], c.kernel, _dot(sections.kernel_verdict(c))) for c in contents]
    cache_text = ", ".join(f"{n} {fmt_bytes(s)}" for n, s in caches) or "caches unknown"
    subtitle = (
        f"{pick.scope.cpu_model} ({pick.scope.label}; {cache_text}). Generated "
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC by benchdb report."
    )
    _make_folder(out)
    index = out / INDEX
    page = html.page(
        f"benchdb report: {pick.scope.label}",
        subtitle,
        html.nav(nav, kernel_nav),
        parts,
        _plotly_script(out, inline, force),
    )
    with writing_out(index, force=force, ours=_is_page) as partial:
        partial.write_text(page, encoding="utf-8")
    regressed = sorted(set(comparison.regressions["kernel"])) if comparison is not None else None
    return Report(index, pick, regressed)


def _dot(verdict: str | None) -> str | None:
    return charts.verdict_colour(verdict) if verdict is not None else None
