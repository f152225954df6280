"""Progress on stderr for long steps (stdout stays clean for --json -): a rich progress line with a
pulsing bar, the current step and the time elapsed on a terminal; one plain line per step otherwise."""

from __future__ import annotations

import contextlib
import sys


@contextlib.contextmanager
def progress_reporter(title: str):
    import shutil

    from rich.console import Console

    from roofline.cli.emit import terminal_columns

    console = Console(stderr=True, width=terminal_columns() or shutil.get_terminal_size().columns)
    if not console.is_terminal:
        def report(step: str) -> None:
            sys.stderr.write(f"{title}: {step}\n")
            sys.stderr.flush()
        yield report
        return
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    columns = (SpinnerColumn(), TextColumn("[bold]{task.fields[title]}"), BarColumn(), TextColumn("{task.description}"),
               TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("starting", total=None, title=title)
        yield lambda step: progress.update(task, description=step)
