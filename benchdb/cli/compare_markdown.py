"""``benchdb compare --format markdown``: a comparison as a pull-request comment.

A reviewer reads the verdict first, then only what changed: the heading says
whether anything got slower; one table lists the slower and faster kernels
with their change and interval; kernels the data could not decide (noisy)
and the environment differences follow folded (``<details>``), since they
explain but do not fail the check.  GitHub-flavoured Markdown (tables,
``<details>``), which GitLab and Gitea render too.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..regress import RunComparison
from ..units import fmt_change, fmt_interval
from ..verdicts import MOVED, Verdict


def _cell(value: Any) -> str:
    """Text safe inside a table cell: pipes escaped, line breaks folded, None as "-"."""
    return "-" if value is None else " ".join(str(value).split()).replace("|", "\\|")


def _table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[str]:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return lines


def _run(info: dict[str, Any]) -> str:
    about = [f"`{t}`" for t in info["tags"]]
    if info.get("git_commit"):
        about.append(f"commit `{info['git_commit'][:10]}`")
    return f"run {info['run_id']}" + (f" ({', '.join(about)})" if about else "")


def _kernel_rows(kernels: list[dict[str, Any]], per_kernel: bool) -> list[list[str]]:
    return [
        [
            f"`{k['kernel']}`",
            k["threads"],
            k["precision"],
            k["context"],
            f"**{k['verdict']}**",
            fmt_change(k["median_ratio"]),
            fmt_interval(k["ci_low"], k["ci_high"]),
            *([f"{k['threshold']:.0%}"] if per_kernel else []),
            f"{k['slower']} / {k['faster']} / {k['points']}",
            k["version_change"] or "",
        ]
        for k in kernels
    ]


def comparison_markdown(result: RunComparison) -> str:
    """The comparison as Markdown: verdict heading, changed kernels, folded details."""
    kernels = result.kernels.to_dict(orient="records")
    slower = [k for k in kernels if k["verdict"] == Verdict.SLOWER]
    changed = [k for k in kernels if k["verdict"] in MOVED]
    noisy = [k for k in kernels if k["verdict"] == Verdict.NOISY]
    level = f"{1 - result.alpha:.0%}"
    if len(result.regressions):
        names = sorted(set(result.regressions["kernel"]))
        heading = f"### benchdb: regression in {len(names)} kernel{'s' * (len(names) > 1)}"
        lead = "Slower: " + ", ".join(f"`{n}`" for n in names)
        points = f" (--per-point: {len(result.regressions)} slower points)"
        lead += (points if result.per_point else "") + "."
    else:
        heading = "### benchdb: no regression"
        lead = "No kernel got slower by more than its threshold."
    lines = [
        heading,
        "",
        lead,
        "",
        f"Baseline {_run(result.baseline)} vs contender {_run(result.contender)} on "
        f"`{result.machine['hostname']}` ({result.machine['cpu_model']}); threshold "
        f"{result.threshold:.0%}, {level} intervals. Kernels: "
        + ", ".join(f"{n} {v}" for v, n in result.kernel_counts.items())
        + ".",
    ]
    per_kernel = bool(result.kernel_thresholds)
    if changed:
        lines += [
            "",
            *_table(
                [
                    "kernel",
                    "threads",
                    "precision",
                    "context",
                    "verdict",
                    "change",
                    f"{level} interval",
                    *(["threshold"] if per_kernel else []),
                    "points slower / faster / all",
                    "new version",
                ],
                _kernel_rows(sorted(changed, key=lambda k: -k["median_ratio"]), per_kernel),
            ),
        ]
    if noisy:
        lines += [
            "",
            f"<details><summary>{len(noisy)} kernel(s) undecided (noisy): a change beyond "
            "the threshold can be neither confirmed nor ruled out; re-measure to decide</summary>",
            "",
            *_table(
                ["kernel", "threads", "precision", "context", "change", f"{level} interval"],
                [
                    [
                        f"`{k['kernel']}`",
                        k["threads"],
                        k["precision"],
                        k["context"],
                        fmt_change(k["median_ratio"]),
                        fmt_interval(k["ci_low"], k["ci_high"]),
                    ]
                    for k in noisy
                ],
            ),
            "",
            "</details>",
        ]
    if result.environment_diff:
        lines += [
            "",
            "<details><summary>Environment differences (often the cause)</summary>",
            "",
            *_table(
                ["field", "baseline", "contender"],
                [[d["field"], d["before"], d["after"]] for d in result.environment_diff],
            ),
            "",
            "</details>",
        ]
    if slower and not result.environment_diff:
        lines += ["", "Same environment (versions, settings) in both runs."]
    lines += ["", result.scatter_note[0].upper() + result.scatter_note[1:] + "."]
    return "\n".join(lines) + "\n"
