"""Rich rendering of a footprint: the headline, per tensor group before and after, and the two ratios side by side."""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text

from roofline.report.fmt import sig
from roofline.report.style import document, section, table
from roofline.results.footprint import FootprintResult
from roofline.units import MB, MIB


def headline(r: FootprintResult, mib: bool = False) -> list[RenderableType]:
    unit, scale = ("MiB", MIB) if mib else ("MB", MB)
    params = f"{r.params:,} parameters"
    if r.active_params is not None and r.active_params != r.params:
        params += (f", {r.active_params:,} active per token ({r.active_params / r.params:.1%}; embeddings and lm_head "
                   "counted); every expert is in the footprint")
    return [Text(f"{r.model} in {r.precision}: {sig(r.total_bytes / scale)} {unit}, {r.total_ratio:.2f}x smaller than "
                 f"in {r.base_dtype} ({sig(r.total_bytes_base / scale)} {unit})", style="bold"),
            Text(f"quantized matrices: {r.quantized_ratio:.2f}x smaller ({sig(r.quantized_bytes_base / scale)} -> "
                 f"{sig(r.quantized_bytes / scale)} {unit}, scales included)"),
            Text(params)]


def render_footprint(r: FootprintResult, mib: bool = False, brief: bool = False) -> RenderableType:
    unit, scale = ("MiB", MIB) if mib else ("MB", MB)
    fmt = lambda b: sig(b / scale) if b else "0"  # noqa: E731
    t = table(["tensor group", "tensors", "params", f"before {unit}", f"after {unit}", "quantized"],
              left=("tensor group", "quantized"),
              footers=["total", "", f"{r.params:,}", fmt(r.total_bytes_base), fmt(r.total_bytes), ""])
    for g in r.groups:
        t.add_row(g.name, str(g.count), f"{g.params:,}" if g.params else "-", fmt(g.bytes_base), fmt(g.bytes),
                  "yes" if g.quantized else "")
    ratios = table(["what", f"before {unit}", f"after {unit}", "ratio"], left=("what",))
    ratios.add_row("quantized matrices alone (with their scales)", fmt(r.quantized_bytes_base), fmt(r.quantized_bytes),
                   f"{r.quantized_ratio:.2f}x")
    ratios.add_row(Text("whole model", style="bold"), fmt(r.total_bytes_base), fmt(r.total_bytes),
                   Text(f"{r.total_ratio:.2f}x", style="bold"))
    groups = section(f"Bytes per tensor group, before ({r.base_dtype}) and after ({r.precision}); {unit} = "
                     f"{'2^20' if mib else '10^6'} bytes", t, [f"policy: {r.policy}"])
    return document(headline(r, mib), [groups, section("Compression, side by side", ratios)], brief=brief)
