"""Print the first fenced block under a README heading (``## Install``, ``## Tests``): the lines .ci/run
runs, so that CI runs exactly what the README tells a user to run."""

from __future__ import annotations

import re
import sys
from pathlib import Path


def block(text: str, heading: str) -> str:
    """The body of the first ``` fenced block in the ``## heading`` section of ``text``."""
    section = re.search(rf"^## {re.escape(heading)}[ \t]*\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    if section is None:
        raise SystemExit(f"README.md: no '## {heading}' section")
    fenced = re.search(r"^```[^\n]*\n(.*?)^```", section.group(1), re.M | re.S)
    if fenced is None:
        raise SystemExit(f"README.md: no fenced block under '## {heading}'")
    return fenced.group(1).rstrip("\n")


if __name__ == "__main__":
    readme = Path(__file__).resolve().parent.parent / "README.md"
    print(block(readme.read_text(encoding="utf-8"), sys.argv[1]))
