"""``benchdb report``: one machine's results as a static HTML page.

Sections: the latest comparison (the newest run against the pinned baseline,
else against the run before it), performance against memory footprint per
kernel for the newest run (paper 003's lookup curves, cache sizes marked),
and each kernel's history with detected steps.  Figures are written as PNG
and SVG into ``img/`` beside ``index.html``; the page shows one format, or
embeds it (``inline``) so that ``index.html`` stands alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from ..db.engine import Database
from ..db.models import Baseline
from ..errors import UserError
from ..query import measurements_frame, resolve_machine
from ..regress import compare_runs, kernel_history
from ..regress.runref import measured_runs
from ..units import fmt_seconds
from . import html, plots

T = TypeVar("T")


def _identity(items: Iterable[T], **_: Any) -> Iterable[T]:
    return items


def _stem(kind: str, name: str) -> str:
    return f"{kind}-{re.sub(r'[^A-Za-z0-9._-]', '_', name)}"


def _prepare_folder(out: Path) -> Path:
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out} is a file; give a folder (it is created if missing)")
    try:
        (out / "img").mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(
            f"cannot create {out}: {exc.strerror}; give a writable --out folder"
        ) from exc
    return out / "img"


class _Figures:
    """Saves figures into ``img/`` and returns the ``<img>`` tag in the chosen format."""

    def __init__(self, root: Path, fmt: str, inline: bool) -> None:
        self.root, self.fmt, self.inline = root, fmt, inline

    def add(self, fig: Any, stem: str, alt: str) -> str:
        saved = plots.save(fig, self.root / "img", stem)
        return html.image(saved[self.fmt], self.root, alt, inline=self.inline)


def _comparison_section(
    db: Database, figures: _Figures, runs: list[Any], pinned: int | None
) -> str:
    latest = runs[0].id
    if pinned is not None and pinned != latest:
        baseline, why = pinned, "the pinned baseline"
    elif len(runs) > 1:
        baseline, why = runs[1].id, "the previous run"
    else:
        return html.section(
            "Latest comparison", html.para("Only one run: nothing to compare.", "note")
        )
    try:
        result = compare_runs(db, str(baseline), str(latest))
    except UserError as exc:
        return html.section("Latest comparison", html.para(str(exc), "note"))
    counts = ", ".join(f"{n} {v}" for v, n in result.counts.items())
    kernels = ", ".join(f"{n} {v}" for v, n in result.kernel_counts.items())
    regressed = ", ".join(sorted(set(result.regressions["kernel"]))) or "none"
    parts = [
        html.para(
            f"Run {latest} against {why}, run {baseline}: kernels {kernels}; points {counts} "
            f"(threshold {result.threshold:.0%}, alpha {result.alpha:g}, run-to-run noise "
            f"sigma {result.noise_sigma:.3f}). Regressed kernels: {regressed}."
        ),
        figures.add(
            plots.comparison_forest(result.results, result.threshold), "comparison", "changes"
        ),
    ]
    if result.environment_diff:
        parts.append(html.para("Environment differences (often the cause):"))
        parts.append(
            html.table(
                result.environment_diff,
                [
                    ("field", "field", None),
                    ("before", "baseline", None),
                    ("after", "contender", None),
                ],
            )
        )
    else:
        parts.append(html.para("Same environment in both runs.", "note"))
    changed = [r for r in result.results.to_dict(orient="records") if r["verdict"] != "unchanged"]
    if changed:
        parts.append(
            html.table(
                changed,
                [
                    ("kernel", "kernel", None),
                    ("shape_key", "shape", None),
                    ("threads", "threads", None),
                    ("precision", "precision", None),
                    ("baseline_median", "baseline", fmt_seconds),
                    ("contender_median", "contender", fmt_seconds),
                    ("ratio", "change", lambda r: f"{(r - 1) * 100:+.1f}%"),
                    ("p_value", "p", lambda p: f"{p:.3g}"),
                    ("verdict", "verdict", None),
                ],
                row_class="verdict",
            )
        )
    return html.section("Latest comparison", *parts)


def write_report(
    db: Database,
    out: Path,
    *,
    machine: str | None = None,
    image_format: str = "png",
    inline: bool = False,
    detector: str = "potts",
    track: Callable[..., Iterable[Any]] = _identity,
) -> Path:
    """Write ``out/index.html`` (and ``out/img/``); returns the page's path."""
    if image_format not in plots.FORMATS:
        raise UserError(f"unknown image format {image_format!r}; use png or svg")
    with db.session() as s:
        host = resolve_machine(s, machine)
        runs = measured_runs(s, host.id)
        if not runs:
            raise UserError(
                f"machine {host.hostname} has no measured run; run `benchdb collect` first"
            )
        pinned_row = s.get(Baseline, host.id)
        pinned = pinned_row.run_id if pinned_row else None
        caches, hostname, cpu = list(host.caches), host.hostname, host.cpu_model
        latest = runs[0]
        latest_text = (
            f"run {latest.id} {', '.join(latest.tags or [])} of {latest.started_at:%Y-%m-%d %H:%M}"
        )
    _prepare_folder(out)
    figures = _Figures(out, image_format, inline)
    sections = [
        html.para(
            f"{cpu} ({hostname}); {len(runs)} measured run(s); newest: {latest_text}. "
            f"Generated {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by benchdb report."
        ),
        _comparison_section(db, figures, runs, pinned),
    ]
    frame = measurements_frame(db, run_ids=[latest.id], valid_only=True)
    kernels = sorted(set(frame["kernel"]))
    perf = [
        figures.add(
            plots.performance_vs_footprint(frame[frame["kernel"] == k], k, caches),
            _stem("perf", k),
            f"{k} performance vs footprint",
        )
        for k in track(kernels, description="footprint curves")
    ]
    sections.append(
        html.section(
            f"Performance vs memory footprint (run {latest.id})",
            html.para("Dotted lines: the machine's data cache capacities.", "note"),
            *perf,
        )
    )
    if len(runs) > 1:
        parts, steps = [], []
        for k in track(kernels, description="histories"):
            _, series = kernel_history(db, k, machine=str(host.id), detector=detector)
            parts.append(
                figures.add(plots.history_plot(series, k), _stem("history", k), f"{k} history")
            )
            steps.extend(
                {"kernel": k, "shape": s.shape_key, "threads": s.threads, **st}
                for s in series
                for st in s.steps
            )
        table = (
            html.table(
                steps,
                [
                    ("kernel", "kernel", None),
                    ("shape", "shape", None),
                    ("threads", "threads", None),
                    ("previous_run_id", "from run", None),
                    ("run_id", "to run", None),
                    ("change", "change", lambda c: f"{c:+.1%}"),
                    (
                        "environment_diff",
                        "environment change",
                        lambda d: (
                            "; ".join(f"{x['field']}: {x['before']} -> {x['after']}" for x in d)
                            or "same"
                        ),
                    ),
                ],
                row_class="direction",
            )
            if steps
            else html.para(f"No step found by the {detector} detector.", "note")
        )
        sections.append(html.section(f"History ({detector} change points)", table, *parts))
    index = out / "index.html"
    index.write_text(html.page(f"benchdb report: {hostname}", sections), encoding="utf-8")
    return index
