"""What ``collect`` will do, shown before it does it: the estimate line and ``--dry-run``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..collectors.estimate import Estimate, HostRates, estimate
from ..collectors.plan import Point, SweepPlan
from ..collectors.sizes import Round
from ..machine import MachineInfo
from ..shapes import shape_key
from ..units import fmt_bytes, fmt_duration
from .common import console, print_json, print_table


def rates_text(rates: HostRates) -> str:
    return (
        f"this host copies {rates.stream / 1e9:.1f} GB/s and writes fresh memory at "
        f"{rates.fresh / 1e9:.1f} GB/s"
    )


def budget_text(found: Estimate, budget: float | None) -> str:
    """How far the budget reaches into the plan, in words."""
    if budget is None:
        return "no time budget"
    share = found.within(budget)
    if share >= 1:
        return f"within the time budget of {fmt_duration(budget)}"
    return (
        f"the time budget of {fmt_duration(budget)} covers about {share:.0%} of it: the coarse "
        "points of every level run first, and the same command continues the rest"
    )


def estimate_line(
    plan: SweepPlan, todo: Sequence[Point], found: Estimate, budget: float | None
) -> str:
    """One line before a sweep starts: its size, largest point and expected time."""
    largest = max(todo, key=lambda p: p.footprint_bytes)
    return (
        f"{len(todo)} point-passes ({len({p.key for p in todo})} points), the largest "
        f"{fmt_bytes(largest.footprint_bytes)}; estimated {fmt_duration(found.total_s)} "
        f"({rates_text(found.rates)}), {budget_text(found, budget)}"
    )


def _caches_text(machine: MachineInfo) -> str:
    caches = ", ".join(f"L{c.level} {fmt_bytes(c.size_bytes)}" for c in machine.data_caches())
    origin = "described" if machine.source == "described" else "this machine's"
    return f"{origin} caches: {caches}; memory {fmt_bytes(machine.memory_bytes)}"


def plan_rows(plan: SweepPlan, rates: HostRates) -> list[dict[str, Any]]:
    """Per benchmark (and precision, threads): its points by round, extremes and estimate."""
    groups: dict[tuple[str, str, int], list[Point]] = {}
    for point in plan.points:
        groups.setdefault((point.benchmark, point.precision, point.threads), []).append(point)
    rows = []
    for (name, precision, threads), points in groups.items():
        by_size = sorted(points, key=lambda p: p.footprint_bytes)
        found = estimate(plan, points * plan.passes, rates)
        rows.append(
            {
                "benchmark": name,
                "precision": precision,
                "threads": threads,
                "points": len(points),
                **{r.name.lower(): sum(p.round == r for p in points) for r in Round},
                "smallest": shape_key(by_size[0].shape),
                "largest": shape_key(by_size[-1].shape),
                "largest_footprint": by_size[-1].footprint_bytes,
                "estimate_s": found.total_s,
                "shapes": [shape_key(p.shape) for p in points],
            }
        )
    return rows


PLAN_COLUMNS = [
    ("benchmark", "benchmark", None),
    ("setting", "setting", None),
    ("points", "points", None),
    ("coarse", "coarse", None),
    ("dense", "dense", None),
    ("rectangles", "rectangles", None),
    ("span", "shapes", None),
    ("largest_footprint", "largest", fmt_bytes),
    ("estimate_s", "estimate", fmt_duration),
]


def show_plan(
    plan: SweepPlan,
    machine: MachineInfo,
    rates: HostRates,
    budget: float | None,
    as_json: bool,
) -> None:
    """``collect --dry-run``: the plan, its largest footprint and its expected time."""
    rows = plan_rows(plan, rates)
    found = estimate(plan, list(plan.points) * plan.passes, rates)
    largest = max(p.footprint_bytes for p in plan.points)
    if as_json:
        print_json(
            {
                "caches": [c.size_bytes for c in machine.data_caches()],
                "caches_described": machine.source == "described",
                "mode": plan.mode,
                "passes": plan.passes,
                "samples": plan.samples,
                "sample_time": plan.sample_time,
                "points": len(plan.points),
                "largest_footprint": largest,
                "estimate_s": found.total_s,
                "estimate_by_round": {r.name.lower(): s for r, s in found.by_round.items()},
                "time_budget_s": budget,
                "budget_share": found.within(budget),
                "rates": {"stream": rates.stream, "fresh": rates.fresh},
                "benchmarks": rows,
            }
        )
        return
    console.print(f"dry run, nothing measured or stored; {_caches_text(machine)}", highlight=False)
    print_table(
        [
            {
                **r,
                "setting": f"{r['precision']} {r['threads']}t",
                "span": f"{r['smallest']} .. {r['largest']}",
            }
            for r in rows
        ],
        PLAN_COLUMNS,
        title=f"{plan.mode} sweep: {plan.passes} pass(es), {plan.samples} samples each",
    )
    for r in rows:
        console.print(f"{r['benchmark']}: {' '.join(r['shapes'])}", highlight=False, soft_wrap=True)
    console.print(
        f"{len(plan.points)} points x {plan.passes} passes, the largest {fmt_bytes(largest)}; "
        f"estimated {fmt_duration(found.total_s)} ({rates_text(rates)}); "
        f"{budget_text(found, budget)}",
        highlight=False,
        soft_wrap=True,
    )
