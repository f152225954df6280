"""Every README block marked `<!-- output of: CMD -->` is what CMD prints today."""

from __future__ import annotations

import re

import pytest
from clitools import REPO, run_cli

BLOCKS = re.findall(r"<!-- output of: (.+?) -->\n```\n\$ (.+?)\n(.*?)```", (REPO / "README.md").read_text(), re.S)


def test_readme_has_checked_blocks():
    assert BLOCKS, "no checked output blocks found in README.md"


@pytest.mark.parametrize("marker, shown, output", BLOCKS, ids=[b[0] for b in BLOCKS])
def test_readme_output_is_current(marker, shown, output):
    assert marker == shown
    args = shown.split()[1:]
    assert shown.split()[0] == "roofline"
    proc = run_cli(*args, env={"COLUMNS": "100"}, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == output, f"README block for `{shown}` is stale: regenerate it with COLUMNS=100"
