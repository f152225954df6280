"""Progress on stderr for long steps (stdout stays clean for --json -): one line per step, with the time
elapsed, whether or not stderr is a terminal; on a terminal that can redraw (a tty, TERM not dumb), a
pulsing bar with the current step below the lines as well.

The decision is the stream's own ``isatty()``, not rich's terminal detection: FORCE_COLOR or
TTY_COMPATIBLE make rich draw its live display into a pipe, where (with TERM=dumb, or once the display
is removed at the end) nothing readable is left."""

from __future__ import annotations

import contextlib
import os
import sys
import time


def _can_redraw(stream) -> bool:
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        return False
    return bool(tty) and os.environ.get("TERM", "") not in ("dumb", "unknown")


@contextlib.contextmanager
def progress_reporter(title: str):
    start = time.monotonic()

    def line(step: str) -> str:
        seconds = int(time.monotonic() - start)
        return f"{title} [{seconds // 60}:{seconds % 60:02d}]: {step}"

    stream = sys.stderr
    if not _can_redraw(stream):
        def report(step: str) -> None:
            stream.write(line(step) + "\n")
            stream.flush()
        yield report
        return
    import shutil

    from rich.console import Console
    from rich.markup import escape
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from roofline.cli.emit import terminal_columns

    console = Console(file=stream, force_terminal=True, width=terminal_columns() or shutil.get_terminal_size().columns)
    columns = (SpinnerColumn(), TextColumn("[bold]{task.fields[title]}"), BarColumn(), TextColumn("{task.description}"),
               TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("starting", total=None, title=title)

        def report(step: str) -> None:
            progress.console.print(escape(line(step)), highlight=False)
            progress.update(task, description=escape(step))
        yield report
