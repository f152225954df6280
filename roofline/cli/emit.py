"""Ending a command: JSON (atomically, through :mod:`roofline.files.writing`) or reports through rich."""

from __future__ import annotations

import os
import sys

from roofline.results import json_text


def write_json(result, dest: str, force: bool = False) -> None:
    text = json_text(result)
    if dest == "-":
        sys.stdout.write(text)
        return
    from roofline.files.writing import write_text

    write_text(dest, text, force=force)


def terminal_columns() -> int | None:
    """``COLUMNS`` when it is a positive whole number; None when it is unset or unusable (``0``, ``abc``),
    which rich would otherwise take as a width of 0 and print nothing."""
    try:
        width = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        return None
    return width if width > 0 else None


class _Printable:
    """A renderable as rich draws it, every control character of its text escaped (strings from files reach
    the terminal as text: a name holding ESC cannot move the cursor or retitle the window)."""

    def __init__(self, renderable) -> None:
        self.renderable = renderable

    def __rich_console__(self, console, options):
        from rich.segment import Segment

        from roofline.errors import printable

        for seg in console.render(self.renderable, options):
            if seg.control or seg.text.isprintable():
                yield seg
            else:
                yield Segment(printable(seg.text), seg.style)


def _console(**kw):
    """rich's Console with markup and emoji codes off: no string from a file is ever read as markup
    (``[/sys/devices/...]`` in a platform's source is text)."""
    from rich.console import Console

    return Console(markup=False, emoji=False, **kw)


def print_rich(renderable) -> None:
    """Print through rich. On a terminal, as rich draws it; into a file or a pipe, plain text without the
    spaces rich pads lines with, at COLUMNS wide (100 when COLUMNS is unset or not a positive number). A
    headline (:mod:`roofline.report.headline` items) goes out as the same text without loading rich
    where that text is exact. Strings are never markup, and their control characters are escaped."""
    if isinstance(renderable, list):
        from roofline.report.headline import plain_text, to_rich

        text = None if sys.stdout.isatty() else plain_text(renderable, terminal_columns() or 100)
        if text is not None:
            sys.stdout.write(text)
            return
        from rich.console import Group

        renderable = Group(*to_rich(renderable))
    renderable = _Printable(renderable)
    if sys.stdout.isatty():
        import shutil

        _console(width=terminal_columns() or shutil.get_terminal_size().columns).print(renderable)
        return
    console = _console(width=terminal_columns() or 100, color_system=None)
    with console.capture() as capture:
        console.print(renderable)
    sys.stdout.write("\n".join(line.rstrip() for line in capture.get().split("\n")))


def check_html(path: str | None) -> None:
    """An ``--html`` page's name, before any work (its target was checked with the other outputs)."""
    if path and not path.lower().endswith((".html", ".htm")):
        from roofline.errors import UserError

        raise UserError(f"--html {path}: the page is written as .html")


def write_html(result, args, page) -> None:
    """``page(result, command_line)`` written to ``--html`` FILE, whole or not at all."""
    if getattr(args, "html", None):
        from roofline.files.writing import write_text

        write_text(args.html, page(result, getattr(args, "command_line", "roofline")), force=getattr(args, "force", False))


def emit(result, args, render, page=None) -> int:
    """The common ending of a command: JSON to stdout (and nothing else), or to a file and the tables,
    or the tables; ``render`` builds the rich renderable, imported only when tables are printed; ``page``
    builds the ``--html`` page."""
    if page is not None and getattr(args, "html", None):
        write_html(result, args, page)
    if getattr(args, "json", None):
        write_json(result, args.json, force=getattr(args, "force", False))
        if args.json == "-":
            return 0
    print_rich(render())
    if page is not None and getattr(args, "html", None):
        print(f"wrote {args.html}")
    return 0


def check_chart(path: str | None) -> None:
    """A ``--plot`` chart's format, before any work (its target was checked with the other outputs)."""
    if path:
        from roofline.report.plot import check_chart_path

        check_chart_path(path, "--plot")


def emit_with_chart(result, args, render, draw, page=None) -> int:
    """:func:`emit`, and the ``--plot`` chart (``draw(result, path)``) drawn to a temporary file and renamed
    over the target first."""
    if args.plot:
        from roofline.files.writing import replacing

        with replacing(args.plot, force=args.force) as path:
            draw(result, path)
    code = emit(result, args, render, page)
    if args.plot and args.json != "-":
        print(f"wrote {args.plot}")
    return code
