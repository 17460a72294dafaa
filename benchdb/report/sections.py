"""The parts of the report page, each from typed results of the Python API.

* :func:`runs_part`: which runs are compared and why (:class:`~benchdb.regress.pick.RunPick`).
* :func:`summary_part`: the verdict first, the kernels table, every kernel's change
  on one chart, the environment difference and the changed points.
* :func:`kernel_part`: one kernel's curve with its prediction, its change per point
  and its history with the steps found.
* :func:`comm_part`: the communication models against their measurements.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from ..comm.summary import REGIME_COLUMNS, CommSummary
from ..regress import RunComparison
from ..regress.pick import RunInfo, RunPick
from ..units import fmt_bytes, fmt_change, fmt_ids, fmt_seconds
from ..verdicts import Verdict
from . import charts, html
from .content import KernelContent

SEVERITY = (Verdict.SLOWER, Verdict.FASTER, Verdict.NOISY, Verdict.UNCHANGED)
"""Verdicts from most to least worth a look: a kernel's dot shows the first that applies."""


def kernel_verdict(content: KernelContent) -> str | None:
    """The most severe verdict over the kernel's configurations (None: not compared)."""
    if content.verdicts is None or content.verdicts.empty:
        return None
    found = set(content.verdicts["verdict"])
    known = [v for v in SEVERITY if v in found]
    return known[0] if known else sorted(found)[0]


def _describe(run: RunInfo | None) -> str:
    if run is None:
        return "none"
    return (
        f"{run.label}: {run.settings}; {run.measurements} measurements; "
        f"environment {run.record.environment_id}"
    )


def runs_part(pick: RunPick, comparison_error: str | None) -> str:
    items = [
        ("Collection", _describe(pick.collection)),
        ("Baseline", _describe(pick.baseline)),
        ("Why", pick.reason),
    ]
    parts = [html.definitions(items)]
    if comparison_error:
        parts.append(html.para(f"The comparison failed: {comparison_error}", "note"))
    if pick.left_out:
        rows = [{"run": o.run.label, "why": o.why} for o in pick.left_out]
        parts.append(
            html.details(
                f"Runs left out ({len(rows)})",
                html.table(rows, [("run", "run", None), ("why", "why it is not compared", None)]),
            )
        )
    return html.section("runs", "Runs compared", f"<div class='card'>{''.join(parts)}</div>")


def _verdict_line(result: RunComparison) -> tuple[str, str]:
    kernels = result.kernels
    counts = ", ".join(f"{n} {v}" for v, n in result.kernel_counts.items() if n)
    if len(result.regressions):
        names = ", ".join(sorted(set(result.regressions["kernel"])))
        what = "kernel(s)" if not result.per_point else "point(s)"
        return (
            f"Regression: {len(result.regressions)} {what} slower ({names}). Kernels: {counts}.",
            Verdict.SLOWER,
        )
    noisy = int((kernels["verdict"] == Verdict.NOISY).sum())
    if noisy:
        return (
            f"No regression found, but {noisy} of {len(kernels)} kernels are noisy: the runs "
            f"differ too much to tell (re-measure on a quieter machine). Kernels: {counts}.",
            Verdict.NOISY,
        )
    return f"No regression. Kernels: {counts}.", Verdict.UNCHANGED


def summary_part(result: RunComparison, kernel_ids: dict[str, str]) -> str:
    text, cls = _verdict_line(result)
    parts = [
        html.banner(text, cls),
        html.para(
            "A kernel is slower (faster) when the "
            f"{1 - result.alpha:.0%} interval of the median of its points' changes lies wholly "
            f"above (below) no change and that median is beyond the {result.threshold:.0%} "
            "threshold, unchanged when the whole interval lies within the threshold, noisy "
            "otherwise; a point is slower or faster when its samples are separated beyond the "
            f"threshold, or its change is significant (p < {result.alpha:g}) and beyond it.",
            "note",
        ),
    ]
    rows = result.kernels.sort_values(
        ["verdict", "kernel"], key=lambda s: s.map(_severity_rank) if s.name == "verdict" else s
    ).to_dict(orient="records")
    columns: list[html.Column] = [
        ("kernel", "kernel", lambda k: html.link(k, kernel_ids.get(k, ""))),
        ("threads", "threads", None),
        ("precision", "precision", None),
        ("context", "context", None),
        ("points", "points", None),
        ("median_ratio", "median change", fmt_change),
        ("verdict", "verdict", None),
    ]
    parts.append(html.table(rows, columns, row_class="verdict", numeric=("points", "median_ratio")))
    parts.append(
        charts.embed(
            charts.overview(result.results, result.kernels, result.threshold), "chart-overview"
        )
    )
    if result.environment_diff:
        parts.append(html.para("Environment differences between the two runs (often the cause):"))
        parts.append(
            html.table(
                result.environment_diff,
                [
                    ("field", "field", None),
                    ("before", "baseline", None),
                    ("after", "collection", None),
                ],
            )
        )
    else:
        parts.append(html.para("Same software environment in both runs.", "note"))
    changed = result.results[result.results["verdict"] != Verdict.UNCHANGED]
    if len(changed):
        parts.append(
            html.details(
                f"Points that changed or are noisy ({len(changed)} of {len(result.results)})",
                html.table(
                    changed.to_dict(orient="records"),
                    [
                        ("kernel", "kernel", None),
                        ("shape_key", "shape", None),
                        ("threads", "threads", None),
                        ("precision", "precision", None),
                        ("context", "context", None),
                        ("footprint_bytes", "footprint", fmt_bytes),
                        ("baseline_median", "baseline", fmt_seconds),
                        ("contender_median", "collection", fmt_seconds),
                        ("ratio", "change", fmt_change),
                        ("p_value", "p", lambda p: f"{p:.3g}"),
                        ("verdict", "verdict", None),
                    ],
                    row_class="verdict",
                    numeric=(
                        "footprint_bytes",
                        "baseline_median",
                        "contender_median",
                        "ratio",
                        "p_value",
                    ),
                ),
            )
        )
    return html.section("summary", "Summary", *parts)


def _severity_rank(verdict: str) -> int:
    return SEVERITY.index(verdict) if verdict in SEVERITY else len(SEVERITY)


def _kernel_heading(content: KernelContent) -> str:
    badges = []
    if content.verdicts is not None:
        for r in content.verdicts.itertuples():
            badges.append(
                html.badge(
                    f"{r.verdict} {fmt_change(r.median_ratio)} "
                    f"({r.threads} thr, {r.precision}, {r.context})",
                    charts.verdict_colour(r.verdict),
                )
            )
    return f"<h3>{escape(content.kernel)}{''.join(badges)}</h3>"


def _prediction_note(content: KernelContent) -> list[str]:
    notes = []
    for p in content.predictions:
        runs = fmt_ids(list(p.run_ids))
        loo = f"; leave-one-out error median {p.loo_median:.1%}" if p.loo_median is not None else ""
        notes.append(
            f"Prediction ({p.config}): {p.method} lookup curve of environment {p.environment_id} "
            f"over runs {runs}{loo}."
        )
    return notes + content.notes


def _steps(series: Sequence) -> str:
    rows = [
        {
            "shape": s.shape_key,
            "config": f"{s.threads} thr, {s.precision}, {s.context}",
            "from": st["previous_run_id"],
            "to": st["run_id"],
            "change": st["change"],
            "direction": st.get("direction", ""),
            "environment": "; ".join(
                f"{d['field']}: {d['before']} -> {d['after']}" for d in st["environment_diff"]
            )
            or "same",
        }
        for s in series
        for st in s.steps
    ]
    if not rows:
        return ""
    return html.details(
        f"Steps found ({len(rows)})",
        html.table(
            rows,
            [
                ("shape", "shape", None),
                ("config", "configuration", None),
                ("from", "from run", None),
                ("to", "to run", None),
                ("change", "change", lambda c: fmt_change(1 + c)),
                ("environment", "environment change", None),
            ],
            row_class="direction",
        ),
    )


def kernel_part(
    content: KernelContent, anchor: str, caches: Sequence[tuple[str, int]], threshold: float | None
) -> str:
    figures = [charts.embed(charts.curve(content, caches), f"{anchor}-curve")]
    if content.comparison is not None and threshold is not None and len(content.comparison):
        figures.append(
            charts.embed(
                charts.ratios(content.comparison, threshold, content.kernel), f"{anchor}-ratio"
            )
        )
    if content.history:
        figures.append(
            charts.embed(
                charts.history(content.history, content.kernel), f"{anchor}-history", wide=True
            )
        )
    notes = "".join(html.para(n, "note") for n in _prediction_note(content))
    return html.article(
        anchor,
        _kernel_heading(content),
        notes,
        f"<div class='charts'>{''.join(figures)}</div>",
        _steps(content.history),
    )


def comm_part(summary: CommSummary | None, missing: str) -> str:
    if summary is None:
        return html.section("comm", "Communication", html.para(missing, "note"))
    params = summary.params
    figures = [
        charts.embed(
            charts.comm_fit(summary.frame, params.postal, "pingpong", "Ping-pong: one-way time"),
            "chart-comm-pingpong",
        )
    ]
    if params.exchange:
        figures.append(
            charts.embed(
                charts.comm_fit(
                    summary.frame, params.exchange, "exchange", "MPI_Sendrecv exchange"
                ),
                "chart-comm-exchange",
            )
        )
    if summary.halo:
        figures.append(charts.embed(charts.halo(summary.halo), "chart-comm-halo"))
    maxrate = (
        "maxrate",
        "max-rate",
        lambda m: m["form"] + (f" ({m['reason']})" * bool(m.get("reason"))),
    )
    table = html.table(
        summary.regimes,
        [*REGIME_COLUMNS[:7], maxrate, *REGIME_COLUMNS[7:]],
        numeric=("alpha_s", "bandwidth_Bps", "points", "median_rel_error", "max_rel_error"),
    )
    return html.section(
        "comm",
        "Communication",
        html.para(
            f"{params.name}: models {params.source.removeprefix('fitted: ')}, drawn over "
            f"the points of comm run {summary.run_id} (benchdb comm show prints the same).",
            "note",
        ),
        f"<div class='charts'>{''.join(figures)}</div>",
        table,
    )
