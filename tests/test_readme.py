"""Every block marked `<!-- output of: CMD -->` in README.md and docs/*.md is what CMD prints today."""

from __future__ import annotations

import re

import pytest
from clitools import REPO, run_cli

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
PATTERN = re.compile(r"<!-- output of: (.+?) -->\n```\n\$ (.+?)\n(.*?)```", re.S)
BLOCKS = [(page, *m) for page in PAGES for m in PATTERN.findall(page.read_text())]


def test_readme_has_checked_blocks():
    assert any(page.name == "README.md" for page, *_ in BLOCKS), "no checked output blocks found in README.md"


def test_capacity_planning_page_has_checked_blocks():
    shown = [b for b in BLOCKS if b[0].name == "capacity-planning.md"]
    assert len(shown) >= 4, "docs/capacity-planning.md shows encoder and decoder plans in both scenarios"


@pytest.mark.parametrize("page, marker, shown, output", BLOCKS,
                         ids=[f"{b[0].relative_to(REPO)}: {b[1]}" for b in BLOCKS])
def test_readme_output_is_current(page, marker, shown, output):
    assert marker == shown
    args = shown.split()[1:]
    assert shown.split()[0] == "roofline"
    proc = run_cli(*args, env={"COLUMNS": "100"}, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == output, (f"{page.name} block for `{shown}` is stale: regenerate it with "
                                   "python tests/update_readme.py")
