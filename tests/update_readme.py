"""Regenerate the blocks of README.md and docs/*.md marked `<!-- output of: CMD -->` by running CMD (COLUMNS=100).

    python tests/update_readme.py          # rewrite them in place
tests/test_readme.py fails when a block differs from what its command prints today.
"""

from __future__ import annotations

import re
import sys

from clitools import REPO, run_cli

PATTERN = re.compile(r"(<!-- output of: (.+?) -->\n```\n\$ )(.+?)\n(.*?)```", re.S)


def main() -> int:
    for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        text = path.read_text()

        def regenerate(m: re.Match, path=path) -> str:
            cmd = m.group(2)
            proc = run_cli(*cmd.split()[1:], env={"COLUMNS": "100"}, cwd=REPO)
            if proc.returncode != 0:
                sys.exit(f"{path.name}: `{cmd}` failed: {proc.stderr}")
            return f"{m.group(1)}{cmd}\n{proc.stdout}```"

        new = PATTERN.sub(regenerate, text)
        if new != text:
            path.write_text(new)
            print(f"updated {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
