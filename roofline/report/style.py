"""The look every report shares: a headline that answers the question, then titled sections.

A section is a bold title line, a table (a rule under the header, no frame) and notes. Titles
and notes are plain text, wrapped at the terminal's width rather than at the table's, so every
section reads the same whatever its table's width.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text


def table(columns: Sequence[str], left: Iterable[str] = (), wrap: Iterable[str] = (),
          footers: Sequence[str] | None = None) -> Table:
    """A table with ``columns`` (right-aligned unless in ``left``; cells never wrap unless in ``wrap``);
    ``footers``: one footer cell per column (a totals row)."""
    left, wrap = set(left), set(wrap)
    t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, collapse_padding=True,
              show_footer=footers is not None)
    for i, c in enumerate(columns):
        t.add_column(c, justify="left" if c in left else "right", no_wrap=c not in wrap,
                     overflow="fold" if c in wrap else "ellipsis", footer=footers[i] if footers is not None else "")
    return t


def grid(columns: Sequence[str], left: Iterable[str] = ()) -> Table:
    """A compact table for a headline: a plain header row, no rules."""
    left = set(left)
    t = Table(box=None, show_edge=False, pad_edge=False, padding=(0, 1))
    for c in columns:
        t.add_column(c, justify="left" if c in left else "right", no_wrap=True, header_style="bold")
    return t


def section(title: str, body: RenderableType | None = None, notes: Iterable[str] = ()) -> Group:
    """A bold title line, the body (a table), then one line per note."""
    parts: list[RenderableType] = [Text(title, style="bold")]
    if body is not None:
        parts.append(body)
    notes = [n for n in notes if n]
    if notes:
        parts.append(Text("\n".join(notes)))
    return Group(*parts)


def document(headline: Sequence[RenderableType], sections: Sequence[RenderableType] = (),
             brief: bool = False) -> Group:
    """The headline, then (unless ``brief``) each section after a blank line."""
    parts: list[RenderableType] = list(headline)
    if not brief:
        for s in sections:
            parts += [Text(""), s]
    return Group(*parts)
