"""A headline, the answer a command prints first: lines of text and compact grids, kept as plain data so
that ``--brief`` can print it without loading rich. :func:`plain_text` gives what rich prints for it
into a file or a pipe, or None where only rich's own layout would be exact (a line longer than the
width, a character wider than one cell); :func:`to_rich` gives the renderables the full report prints.
"""

from __future__ import annotations

from collections.abc import Sequence


class Line:
    """One line of text (``style``: how rich shows it on a terminal)."""

    __slots__ = ("text", "style")

    def __init__(self, text: str, style: str = "") -> None:
        self.text, self.style = text, style


class Grid:
    """A compact table: a header row, then rows; columns right-aligned unless named in ``left``."""

    __slots__ = ("columns", "left", "rows")

    def __init__(self, columns: Sequence[str], left: Sequence[str] = ()) -> None:
        self.columns, self.left = list(columns), set(left)
        self.rows: list[list[str | Line]] = []

    def add_row(self, *cells: str | Line) -> None:
        self.rows.append(list(cells))


Item = Line | Grid


def _text(cell: str | Line) -> str:
    from roofline.errors import printable

    return printable(cell.text if isinstance(cell, Line) else cell)


def plain_text(items: Sequence[Item], width: int) -> str | None:
    """The headline as rich prints it without colour at ``width`` columns (lines right-stripped), or None."""
    lines: list[str] = []
    for item in items:
        if isinstance(item, Line):
            lines += _text(item).split("\n")
            continue
        cells = [item.columns] + [[_text(c) for c in row] for row in item.rows]
        widths = [max(len(row[j]) for row in cells) for j in range(len(item.columns))]
        for row in cells:
            out = []
            for j, (cell, w) in enumerate(zip(row, widths)):
                out.append(cell.ljust(w) if item.columns[j] in item.left else cell.rjust(w))
            lines.append("  ".join(out))  # one cell of padding each side, none at the edges
    if any(len(line) > width or not line.isascii() for line in lines):
        return None
    return "\n".join(line.rstrip() for line in lines) + "\n"


def to_rich(items: Sequence[Item]) -> list:
    """The headline as rich renderables (a grid's header in bold, as the full report shows it)."""
    from rich.table import Table
    from rich.text import Text

    out: list = []
    for item in items:
        if isinstance(item, Line):
            out.append(Text(item.text, style=item.style))
            continue
        t = Table(box=None, show_edge=False, pad_edge=False, padding=(0, 1))
        for c in item.columns:
            t.add_column(c, justify="left" if c in item.left else "right", no_wrap=True, header_style="bold")
        for row in item.rows:
            t.add_row(*(Text(c.text, style=c.style) if isinstance(c, Line) else c for c in row))
        out.append(t)
    return out
