"""A status line on stderr for long steps (stdout stays clean for --json -)."""

from __future__ import annotations

import contextlib
import sys


@contextlib.contextmanager
def progress_reporter(title: str):
    from rich.console import Console

    console = Console(stderr=True)
    if not console.is_terminal:
        def report(step: str) -> None:
            sys.stderr.write(f"{title}: {step}\n")
            sys.stderr.flush()
        yield report
        return
    with console.status(f"{title}...") as status:
        yield lambda step: status.update(f"{title}: {step}")
