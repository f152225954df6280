"""Rich rendering of a footprint: per tensor group, before and after, and the two ratios side by side."""

from __future__ import annotations

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from roofline.report.fmt import sig
from roofline.results.footprint import FootprintResult
from roofline.units import MB, MIB


def render_footprint(r: FootprintResult, mib: bool = False) -> RenderableType:
    unit, scale = ("MiB", MIB) if mib else ("MB", MB)
    t = Table(title=f"{r.model}: {r.precision} over a {r.base_dtype} base ({unit} = "
              f"{'2^20' if mib else '10^6'} bytes)", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False,
              show_footer=True, collapse_padding=True)
    fmt = lambda b: sig(b / scale) if b else "0"  # noqa: E731
    cols = [("tensor group", "total"), ("tensors", ""), ("params", f"{r.params:,}"),
            (f"{r.base_dtype} {unit}", fmt(r.total_bytes_base)), (f"{r.precision} {unit}", fmt(r.total_bytes)),
            ("quantized", "")]
    for name, foot in cols:
        t.add_column(name, footer=foot, justify="left" if name in ("tensor group", "quantized") else "right")
    for g in r.groups:
        t.add_row(g.name, str(g.count), f"{g.params:,}" if g.params else "-", fmt(g.bytes_base), fmt(g.bytes),
                  "yes" if g.quantized else "")
    ratios = Table(title="Compression, side by side", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for c in ("what", f"before {unit}", f"after {unit}", "ratio"):
        ratios.add_column(c, justify="left" if c == "what" else "right")
    ratios.add_row("quantized matrices alone (with their scales)", fmt(r.quantized_bytes_base), fmt(r.quantized_bytes),
                   f"{r.quantized_ratio:.2f}x")
    ratios.add_row(Text("whole model", style="bold"), fmt(r.total_bytes_base), fmt(r.total_bytes),
                   Text(f"{r.total_ratio:.2f}x", style="bold"))
    lines = [Text(f"policy: {r.policy}")]
    if r.active_params is not None and r.active_params != r.params:
        lines.append(Text(f"mixture of experts: {r.active_params:,} of the {r.params:,} parameters active per token "
                          f"({r.active_params / r.params:.1%}; embeddings and lm_head counted); every expert is "
                          f"in the footprint"))
    return Group(t, ratios, *lines)
