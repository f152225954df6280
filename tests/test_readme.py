"""Every block of the README and of docs/*.md marked `<!-- output of: CMD -->` is what CMD prints today."""

from __future__ import annotations

import re

import pytest
from clitools import REPO, run_cli

pytestmark = pytest.mark.slow  # the file takes seconds: out of the fast stage (pytest -m "not slow")

PATTERN = re.compile(r"<!-- output of: (.+?) -->\n```\n\$ (.+?)\n(.*?)```", re.S)
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
BLOCKS = [(path.relative_to(REPO).as_posix(), *m) for path in DOCS for m in PATTERN.findall(path.read_text())]


def test_readme_and_docs_have_checked_blocks():
    files = {b[0] for b in BLOCKS}
    assert "README.md" in files, "no checked output blocks found in README.md"
    assert {"docs/formulas.md", "docs/decoders.md", "docs/validation.md", "docs/check-and-calibration.md"} <= files
    shown = [b for b in BLOCKS if b[0] == "docs/capacity-planning.md"]
    assert len(shown) >= 4, "docs/capacity-planning.md shows encoder and decoder plans in both scenarios"


@pytest.mark.parametrize("doc, marker, shown, output", BLOCKS, ids=[f"{b[0]}: {b[1]}" for b in BLOCKS])
def test_output_block_is_current(doc, marker, shown, output, request):
    assert marker == shown
    if shown.split()[1] == "accuracy" and "--records" not in shown:
        request.getfixturevalue("corpus_accuracy")  # computed once, then read from its cache
    args = shown.split()[1:]
    assert shown.split()[0] == "roofline"
    proc = run_cli(*args, env={"COLUMNS": "100"}, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == output, f"{doc}: the block for `{shown}` is stale: run python tests/update_readme.py"


def test_readme_is_short_and_says_what_the_tool_does():
    text = (REPO / "README.md").read_text()
    assert len(text.encode()) < 25 * 1024 and len(text.splitlines()) <= 260
    for doc in DOCS:
        body = doc.read_text().lower()
        for phrase in ("this session", "project brief", "lent machine", "shared/reference", "the brief"):
            assert phrase not in body, (doc.name, phrase)


def test_relative_links_point_into_the_repository():
    for doc in DOCS:
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", doc.read_text()):
            if re.match(r"[a-z]+:", target):
                continue  # a public URL
            resolved = (doc.parent / target).resolve()
            assert resolved.is_relative_to(REPO) and resolved.exists(), (doc.name, target)
