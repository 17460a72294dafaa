"""The documentation a user clones: every relative link resolves inside the repository, and
the design names the papers its equations come from."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"\]\(([^)#\s]+)")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_stay_inside_the_repository(page: Path) -> None:
    for target in LINK.findall(page.read_text()):
        if "://" in target:
            continue
        resolved = (page.parent / target).resolve()
        assert resolved.is_relative_to(ROOT), f"{page.name} links outside the repository: {target}"
        assert resolved.exists(), f"{page.name} links to a missing {target}"
    assert "../shared" not in page.read_text()


def test_the_design_cites_the_papers_in_full() -> None:
    design = (ROOT / "docs" / "design.md").read_text()
    for words in (
        "Kerbyson, P. W. Jones. *A Performance Model of the Parallel Ocean Program.*",
        "End-to-end Performance Modeling of Distributed GPU Applications",
        "Database-driven Application Benchmarking Approach to Performance Modelling",
        "HPCS 2014",
    ):
        assert words in design


def test_the_code_cites_what_a_clone_has() -> None:
    """Docstrings cite the papers through docs/design.md, not the development tree's shared/."""
    sources = [
        p
        for d in ("benchdb", "kernels", "collectors", "migrations")
        for p in (ROOT / d).rglob("*.py")
    ]
    cited = [p.relative_to(ROOT) for p in sources if "shared/" in p.read_text()]
    assert cited == []
